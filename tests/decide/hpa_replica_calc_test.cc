// Table tests of the HPA replica calculation beyond the shared conformance vectors: missing and
// unready pods on the way up versus down, the CPU readiness windows, tolerance edges, integer
// truncation and the Object/External paths.
#include "decide/policies/hpa_replica_calc.h"

#include <gtest/gtest.h>

namespace aiscale::decide::hpa {
namespace {

Pod Ready(std::optional<int64_t> value, int64_t request = 1000) {
  Pod p;
  p.value = value;
  p.request = request;
  return p;
}
Pod Unready(std::optional<int64_t> value, int64_t request = 1000) {
  Pod p = Ready(value, request);
  p.ready = false;
  return p;
}
Pod WithPhase(PodPhase phase, std::optional<int64_t> value = std::nullopt) {
  Pod p = Ready(value);
  p.phase = phase;
  return p;
}
Pod Deleting(int64_t value) {
  Pod p = Ready(value);
  p.deleting = true;
  return p;
}
Pod Started(Pod p, double started_ago, double transition_ago) {
  p.started_s_ago = started_ago;
  p.ready_transition_s_ago = transition_ago;
  return p;
}

MetricSpec Spec(SourceType s, TargetType t, int64_t target, bool cpu = true) {
  MetricSpec m;
  m.source = s;
  m.target = t;
  m.target_value = target;
  m.resource_is_cpu = cpu;
  return m;
}
MetricSpec CpuUtil(int64_t pct) {
  return Spec(SourceType::kResource, TargetType::kUtilization, pct);
}
MetricSpec PodsAvg(int64_t milli) {
  return Spec(SourceType::kPods, TargetType::kAverageValue, milli);
}

struct Case {
  std::string name;
  MetricSpec spec;
  std::vector<Pod> pods;
  int current;
  int expected;                 // ignored when error is set
  std::string rule;             // empty: not checked
  std::optional<int32_t> util;  // expected utilization
  std::optional<int64_t> total = std::nullopt;
  double tolerance = 0.1;
  std::string error = "";  // substring of the expected error
};

TEST(HpaReplicaCalc, Table) {
  const std::vector<Case> cases = {
      {"pods average value scales up",
       PodsAvg(10000),
       {Ready(15000), Ready(15000)},
       2,
       3,
       "ratio",
       std::nullopt},
      // Unready CPU pods are 0 on a scale-up: 80% over 2 pods becomes 53% over 3, inside the
      // tolerance, where ignoring them would have asked for 4.
      {"unready cpu pod counts as zero on scale up",
       CpuUtil(50),
       {Ready(800), Ready(800), Unready(100)},
       3,
       3,
       "within_tolerance",
       80},
      // On a scale-down unready pods are left out entirely (their 900m does not hold it up).
      {"unready cpu pod is ignored on scale down",
       CpuUtil(50),
       {Ready(100), Ready(100), Unready(900)},
       3,
       1,
       "ratio",
       10},
      // Missing metrics are 0 on a scale-up; here that flips the direction, so hold (naively 3).
      {"missing metric counts as zero on scale up",
       PodsAvg(10000),
       {Ready(15000), Ready(15000), Ready(std::nullopt), Ready(std::nullopt)},
       4,
       4,
       "direction_flip",
       std::nullopt},
      // Missing metrics are 100% of request on a scale-down: 3 rather than ceil(0.2*2)=1.
      {"missing metric counts as full request on scale down",
       CpuUtil(50),
       {Ready(100), Ready(100), Ready(std::nullopt)},
       3,
       3,
       "rebalanced",
       10},
      {"missing metric with target above 100 percent counts at target",
       CpuUtil(200),
       {Ready(500), Ready(500), Ready(std::nullopt)},
       3,
       2,
       "rebalanced",
       50},
      {"pods metric missing on scale down counts at target",
       PodsAvg(10000),
       {Ready(2000), Ready(2000), Ready(std::nullopt)},
       3,
       2,
       "rebalanced",
       std::nullopt},
      {"missing metrics that flip a scale down hold current",
       CpuUtil(50),
       {Ready(400), Ready(std::nullopt), Ready(std::nullopt)},
       3,
       3,
       "direction_flip",
       40},
      {"failed and deleting pods are ignored",
       PodsAvg(10000),
       {Ready(20000), WithPhase(PodPhase::kFailed, 0), Deleting(50000)},
       3,
       2,
       "ratio",
       std::nullopt},
      {"pending pods are unready for any metric",
       PodsAvg(10000),
       {Ready(15000), Ready(15000), WithPhase(PodPhase::kPending), WithPhase(PodPhase::kPending)},
       4,
       4,
       "direction_flip",
       std::nullopt},
      {"pods metric ignores the readiness of running pods",
       PodsAvg(10000),
       {Ready(20000), Unready(20000)},
       2,
       4,
       "ratio",
       std::nullopt},
      {"memory ignores readiness",
       Spec(SourceType::kResource, TargetType::kUtilization, 50, /*cpu=*/false),
       {Ready(1000), Unready(1000)},
       2,
       4,
       "ratio",
       100},
      {"cpu pod initializing without a full metric window is unready",
       CpuUtil(50),
       {Started(Ready(1000), 20, 20), Ready(1000)},
       2,
       2,
       "within_tolerance",
       100},
      {"cpu pod initializing after a full metric window counts",
       CpuUtil(50),
       {Started(Ready(1000), 60, 40), Ready(1000)},
       2,
       4,
       "ratio",
       100},
      {"cpu pod that was ready before counts outside the initialization period",
       CpuUtil(50),
       {Started(Unready(1000), 1000, 100), Ready(1000)},
       2,
       4,
       "ratio",
       100},
      {"cpu pod never ready since start is unready",
       CpuUtil(50),
       {Started(Unready(1000), 1000, 995), Ready(1000)},
       2,
       2,
       "within_tolerance",
       100},
      {"ratio exactly at tolerance holds",
       PodsAvg(10000),
       {Ready(11000), Ready(11000), Ready(11000)},
       3,
       3,
       "within_tolerance",
       std::nullopt},
      {"ratio just past tolerance scales",
       PodsAvg(10000),
       {Ready(11100), Ready(11100), Ready(11100)},
       3,
       4,
       "ratio",
       std::nullopt},
      {"custom tolerance holds",
       PodsAvg(10000),
       {Ready(14000), Ready(14000), Ready(14000)},
       3,
       3,
       "within_tolerance",
       std::nullopt,
       std::nullopt,
       0.5},
      {"utilization truncates to an integer percent",
       CpuUtil(50),
       {Ready(333), Ready(333), Ready(333)},
       3,
       2,
       "ratio",
       33},
      {"object value scales from zero without tolerance",
       Spec(SourceType::kObject, TargetType::kValue, 10000),
       {},
       0,
       3,
       "scale_from_zero",
       std::nullopt,
       25000},
      {"object value multiplies by ready pods",
       Spec(SourceType::kObject, TargetType::kValue, 10000),
       {Ready(std::nullopt), Ready(std::nullopt), Unready(std::nullopt)},
       3,
       6,
       "ratio",
       std::nullopt,
       30000},
      {"external average value divides the total",
       Spec(SourceType::kExternal, TargetType::kAverageValue, 1000),
       {},
       2,
       6,
       "ratio",
       std::nullopt,
       5500},
      {"no pods is an error",
       PodsAvg(1000),
       {},
       3,
       0,
       "",
       std::nullopt,
       std::nullopt,
       0.1,
       "no pods"},
      {"only unready pods is an error",
       CpuUtil(50),
       {Unready(100), WithPhase(PodPhase::kPending)},
       2,
       0,
       "",
       std::nullopt,
       std::nullopt,
       0.1,
       "did not receive metrics"},
      {"value target on a pods metric is an error",
       Spec(SourceType::kPods, TargetType::kValue, 1000),
       {Ready(1000)},
       1,
       0,
       "",
       std::nullopt,
       std::nullopt,
       0.1,
       "not valid"},
      {"object metric without a value is an error",
       Spec(SourceType::kObject, TargetType::kValue, 1000),
       {Ready(1000)},
       1,
       0,
       "",
       std::nullopt,
       std::nullopt,
       0.1,
       "no value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CalcOptions opts;
    opts.tolerance_down = opts.tolerance_up = c.tolerance;
    auto r = CalcReplicas(c.spec, c.pods, c.current, opts, c.total);
    if (!c.error.empty()) {
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.status().message().find(c.error), std::string::npos) << r.status().message();
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->replicas, c.expected);
    if (!c.rule.empty()) {
      EXPECT_EQ(r->rule, c.rule);
    }
    EXPECT_EQ(r->utilization, c.util);
  }
}

TEST(HpaReplicaCalc, MissingRequestIsAnErrorForUtilization) {
  Pod p = Ready(500);
  p.has_request = false;
  auto r = CalcReplicas(CpuUtil(50), {Ready(500), p}, 2, CalcOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("missing request"), std::string::npos);
}

TEST(HpaReplicaCalc, CountsPodGroups) {
  auto r = CalcReplicas(CpuUtil(50), {Ready(900), Unready(100), Ready(std::nullopt), Deleting(5)},
                        4, CalcOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ready_pods, 1);
  EXPECT_EQ(r->unready_pods, 1);
  EXPECT_EQ(r->missing_pods, 1);
  EXPECT_EQ(r->ignored_pods, 1);
}

}  // namespace
}  // namespace aiscale::decide::hpa
