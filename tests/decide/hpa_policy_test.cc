// The hpa Policy on WorkloadSignals: per-instance values and readiness, several metrics, and
// missing data (which never scales down).
#include "decide/policies/hpa.h"

#include <cmath>

#include <gtest/gtest.h>

#include "decide/pipeline.h"
#include "decide/policy_registry.h"
#include "decide/stabilizer.h"

namespace aiscale::decide {
namespace {

constexpr TimePoint kNow = AtSeconds(1000);

struct Inst {
  double value;
  bool ready = true;
};

HpaPolicy Make(const std::string& yaml) {
  config::ConfigErrors errors;
  const auto node = config::ParseConfig(yaml, "p.yaml", errors);
  HpaConfig cfg = HpaConfig::Parse(node);
  EXPECT_TRUE(errors.empty()) << errors.ToStatus().message();
  return HpaPolicy(std::move(cfg));
}

void Ingest(WorkloadSignals& s, const std::string& signal, const std::vector<Inst>& values) {
  std::vector<Observation> obs;
  for (size_t i = 0; i < values.size(); ++i) {
    obs.push_back({signal, "pod-" + std::to_string(i), values[i].value, kNow, values[i].ready});
  }
  s.Ingest(signal, obs, kNow, Seconds(45));
}

double FactOr(const Recommendation& r, const std::string& name, double fallback) {
  for (const auto& [k, v] : r.facts) {
    if (k == name) return v;
  }
  return fallback;
}

const char* kGpuUtil = R"(
name: hpa
metrics:
  - {signal: gpu_util, type: Resource, target: {type: Utilization, value: 50}, request: 100}
)";
const char* kTwoMetrics = R"(
name: hpa
metrics:
  - {signal: gpu_util, type: Resource, target: {type: Utilization, value: 50}, request: 100}
  - {signal: concurrency, type: Pods, target: {type: AverageValue, value: 8}}
)";

struct Case {
  std::string name;
  const char* config;
  std::vector<std::pair<std::string, std::vector<Inst>>> signals;
  int current;
  int ready;
  bool valid;
  int desired;
  std::string rule;
  std::string reason_has = "";
};

TEST(HpaPolicy, RecommendsFromSignals) {
  const std::vector<Case> cases = {
      {"utilization scales up",
       kGpuUtil,
       {{"gpu_util", {{80}, {90}, {70}}}},
       3,
       3,
       true,
       5,
       "hpa_ratio"},
      {"pods average value",
       "{name: hpa, metrics: [{signal: concurrency, target: {type: AverageValue, value: 8}}]}",
       {{"concurrency", {{12}, {12}}}},
       2,
       2,
       true,
       3,
       "hpa_ratio"},
      {"unready instance counts as zero on scale up",
       kGpuUtil,
       {{"gpu_util", {{80}, {80}, {10, false}}}},
       3,
       2,
       true,
       3,
       "hpa_within_tolerance"},
      {"unready instance is ignored on scale down",
       kGpuUtil,
       {{"gpu_util", {{10}, {10}, {90, false}}}},
       3,
       2,
       true,
       1,
       "hpa_ratio"},
      {"replicas without a value hold a scale down",
       kGpuUtil,
       {{"gpu_util", {{10}, {10}}}},
       4,
       4,
       true,
       4,
       "hpa_within_tolerance",
       "without a value"},
      {"two metrics take the max",
       kTwoMetrics,
       {{"gpu_util", {{80}, {90}, {70}}}, {"concurrency", {{8}, {8}, {8}}}},
       3,
       3,
       true,
       5,
       "hpa_ratio"},
      {"external value uses ready replicas",
       "{name: hpa, metrics: [{signal: request_rate, type: External, target: {type: Value, value: "
       "100}}]}",
       {{"request_rate", {{300}}}},
       3,
       2,
       true,
       6,
       "hpa_ratio"},
      {"missing signal gives no recommendation",
       kGpuUtil,
       {},
       3,
       3,
       false,
       3,
       "hpa_missing_data",
       "gpu_util is missing"},
      {"invalid values give no recommendation",
       kGpuUtil,
       {{"gpu_util", {{NAN}, {-5}}}},
       3,
       3,
       false,
       3,
       "hpa_missing_data",
       "gpu_util"},
      {"one metric missing blocks a scale down",
       kTwoMetrics,
       {{"gpu_util", {{5}, {5}, {5}}}},
       3,
       3,
       false,
       3,
       "hpa_no_scale_down_on_missing_data",
       "concurrency is missing"},
      {"one metric missing does not block a scale up",
       kTwoMetrics,
       {{"gpu_util", {{80}, {90}, {70}}}},
       3,
       3,
       true,
       5,
       "hpa_ratio"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const HpaPolicy p = Make(c.config);
    WorkloadSignals s;
    for (const auto& [name, values] : c.signals) Ingest(s, name, values);
    PersistentState state;
    const Recommendation r =
        p.Recommend(PolicyInput{s, c.current, c.ready, kNow, {}, {}, {}}, state);
    EXPECT_EQ(r.valid, c.valid) << r.reason;
    EXPECT_EQ(r.desired, c.desired) << r.reason;
    EXPECT_EQ(r.rule, c.rule) << r.reason;
    EXPECT_FALSE(r.reason.empty());
    if (!c.reason_has.empty()) {
      EXPECT_NE(r.reason.find(c.reason_has), std::string::npos) << r.reason;
    }
    // Missing data never yields a valid recommendation below current.
    if (r.desired < c.current) {
      EXPECT_TRUE(r.valid);
    }
    EXPECT_TRUE(state.values.empty());  // the policy keeps nothing
  }
}

// A replica reports one series per GPU ("<pod>/gpu<n>", the dcgm preset; a data-parallel
// server's engines): one pod each. Counted as pods, 4 replicas of 2 GPUs with 2 replicas stale
// looked complete (4 series for 4 replicas) and scaled 4 -> 2, and 40% on a 60% target
// asked for 6 (ceil(0.67 x 8 GPUs)). A share averages over the pod's GPUs; an amount adds up.
TEST(HpaPolicy, SeveralSeriesOfOneReplicaAreOnePod) {
  struct Case {
    std::string name;
    std::string yaml;
    std::string signal;
    std::vector<double> per_gpu;  // 2 series per replica, replicas in order
    int want;
  };
  const std::string util = R"(
name: hpa
metrics:
  - {signal: gpu_util, type: Resource, target: {type: Utilization, value: 60}, request: 100}
)";
  const std::string conc = R"(
name: hpa
metrics:
  - {signal: concurrency, type: Pods, target: {type: AverageValue, value: 8}}
)";
  const std::vector<Case> cases = {
      {"two replicas stale: the missing pods hold it", util, "gpu_util", {20, 20, 20, 20}, 4},
      {"all at 40% of a 60% target", util, "gpu_util", {40, 40, 40, 40, 40, 40, 40, 40}, 3},
      {"a share averages over a pod's GPUs", util, "gpu_util", {90, 30, 90, 30, 90, 30, 90, 30}, 4},
      {"an amount adds up over a pod's engines", conc, "concurrency", {8, 8, 8, 8, 8, 8, 8, 8}, 8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    HpaPolicy p = Make(c.yaml);
    WorkloadSignals s;
    std::vector<Observation> obs;
    for (size_t i = 0; i < c.per_gpu.size(); ++i) {
      obs.push_back({c.signal, "pod-" + std::to_string(i / 2) + "/gpu" + std::to_string(i % 2),
                     c.per_gpu[i], kNow, true});
    }
    s.Ingest(c.signal, obs, kNow, Seconds(45));
    PolicyInput in{s, 4, 4, kNow, std::nullopt, std::nullopt, std::nullopt, 0};
    PersistentState st;
    const Recommendation r = p.Recommend(in, st);
    EXPECT_EQ(r.valid ? r.desired : 4, c.want) << r.reason;
  }
}

// A custom signal has no range: one glitch of -1000 among nine pods at 10 (AverageValue 10)
// summed below 0 and scaled to the minimum. A negative value is not a load: the metric is
// invalid, which never scales down.
TEST(HpaPolicy, ANegativeCustomValueScalesNothingDown) {
  HpaPolicy p = Make(R"(
name: hpa
metrics:
  - {signal: inflight, type: Pods, target: {type: AverageValue, value: 10}}
)");
  WorkloadSignals s;
  std::vector<Inst> values(9, Inst{10});
  values.push_back(Inst{-1000});
  Ingest(s, "inflight", values);
  PolicyInput in{s, 10, 10, kNow, std::nullopt, std::nullopt, std::nullopt, 0};
  PersistentState st;
  const Recommendation r = p.Recommend(in, st);
  EXPECT_FALSE(r.valid && r.desired < 10) << r.reason;
  EXPECT_NE(r.reason.find("negative"), std::string::npos) << r.reason;
}

TEST(HpaPolicy, FactsCarryTheNumbers) {
  const HpaPolicy p = Make(kGpuUtil);
  WorkloadSignals s;
  Ingest(s, "gpu_util", {{80}, {90}, {70}});
  PersistentState state;
  const Recommendation r = p.Recommend(PolicyInput{s, 3, 3, kNow, {}, {}, {}}, state);
  EXPECT_DOUBLE_EQ(FactOr(r, "gpu_util.usage_ratio", -1), 1.6);
  EXPECT_DOUBLE_EQ(FactOr(r, "gpu_util.utilization_pct", -1), 80);
  EXPECT_DOUBLE_EQ(FactOr(r, "gpu_util.target", -1), 50);
  EXPECT_DOUBLE_EQ(FactOr(r, "gpu_util.proposal", -1), 5);
  EXPECT_DOUBLE_EQ(FactOr(r, "gpu_util.ready_pods", -1), 3);
  EXPECT_NE(r.reason.find("utilization 80%"), std::string::npos) << r.reason;
  EXPECT_EQ(p.Signals(), std::vector<std::string>{"gpu_util"});
}

TEST(HpaPolicy, ConfigErrorsNameTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{name: hpa}", ""},
      {"{name: hpa, metrics: []}", "metrics"},
      {"{name: hpa, metrics: [{signal: x, type: Resource, target: {type: Utilization, value: "
       "50}}]}",
       "metrics[0]"},
      {"{name: hpa, metrics: [{signal: x, type: Pods, target: {type: Value, value: 5}}]}",
       "metrics[0].target.type"},
      {"{name: hpa, metrics: [{signal: x, type: Node, target: {type: Value, value: 5}}]}",
       "metrics[0].type"},
      {"{name: hpa, metrics: [{signal: x, target: {type: AverageValue, value: 0}}]}",
       "metrics[0].target.value"},
      {"{name: hpa, metrics: [{signal: x, target: {type: AverageValue, value: 1}}, {signal: x, "
       "target: {type: AverageValue, value: 2}}]}",
       "metrics[1].signal"},
      {"{name: hpa, tolerance: -0.1, metrics: [{signal: x, target: {type: AverageValue, value: "
       "1}}]}",
       "tolerance"},
      {"{name: hpa, metric: [], metrics: [{signal: x, target: {type: AverageValue, value: 1}}]}",
       "metric"},
  };
  for (const auto& [yaml, path] : cases) {
    SCOPED_TRACE(yaml);
    config::ConfigErrors errors;
    HpaConfig::Parse(config::ParseConfig(yaml, "p.yaml", errors));
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors.all()[0].path, path) << errors.ToStatus().message();
  }
}

TEST(HpaPolicy, RegistryBuildsIt) {
  auto reg = PolicyRegistry::Default();
  ASSERT_TRUE(reg.ok()) << reg.status().message();
  config::ConfigErrors errors;
  auto p = reg->Create(config::ParseConfig(kGpuUtil, "p.yaml", errors), WorkloadContext{});
  ASSERT_TRUE(p.ok()) << p.status().message() << errors.ToStatus().message();
  EXPECT_EQ(p->policy->Name(), "hpa");
  EXPECT_TRUE(p->hpa_behavior);
}

// The whole decide path for an hpa workload: policy, default behavior, then min/max.
TEST(HpaPolicy, PipelineAppliesBehaviorThenBounds) {
  auto reg = PolicyRegistry::Default();
  ASSERT_TRUE(reg.ok()) << reg.status().message();
  config::ConfigErrors errors;
  const auto w = config::ParseConfig(R"(
min_replicas: 2
max_replicas: 8
policy:
  name: hpa
  metrics:
    - {signal: gpu_util, type: Resource, target: {type: Utilization, value: 50}, request: 100}
)",
                                     "w.yaml", errors);
  auto p = BuildPipeline(*reg, w, w.Child("policy"), 15, 0);
  ASSERT_TRUE(p.ok()) << p.status().message() << errors.ToStatus().message();
  ASSERT_NE(p->stabilizer, nullptr);  // hpa gets the autoscaling/v2 defaults
  PersistentState pstate, sstate;
  int current = 2;
  auto tick = [&](double t, std::vector<Inst> load) {
    WorkloadSignals s;
    std::vector<Observation> obs;
    for (size_t i = 0; i < load.size(); ++i) {
      obs.push_back({"gpu_util", "pod-" + std::to_string(i), load[i].value, AtSeconds(t), true});
    }
    s.Ingest("gpu_util", obs, AtSeconds(t), Seconds(45));
    const Recommendation r =
        p->policy->Recommend(PolicyInput{s, current, current, AtSeconds(t), {}, {}, {}}, pstate);
    EXPECT_TRUE(r.valid) << r.reason;
    const int st = p->stabilizer->Stabilize(r.desired, current, AtSeconds(t), sstate).desired;
    const int next = p->constraints->Constrain(st, current, std::nullopt).desired;
    if (next != current) p->stabilizer->RecordScale(current, next, AtSeconds(t), sstate);
    current = next;
    return current;
  };
  EXPECT_EQ(tick(0, {{100}, {100}}), 4);  // ratio 2 over 2 pods
  // Wants 8; the +2 at 0 s has just left the 15 s period: max(4 + 4, 4 * 2) = 8 = max.
  EXPECT_EQ(tick(15, std::vector<Inst>(4, {100})), 8);
  EXPECT_EQ(tick(30, std::vector<Inst>(8, {5})), 8);   // wants 1: the 300 s window holds 8
  EXPECT_EQ(tick(314, std::vector<Inst>(8, {5})), 8);  // the 8 from 15 s is still inside
  EXPECT_EQ(tick(315, std::vector<Inst>(8, {5})), 2);  // gone: 1, raised to min_replicas 2
}

TEST(HpaPolicy, PipelineReportsBehaviorErrorsWithPosition) {
  auto reg = PolicyRegistry::Default();
  ASSERT_TRUE(reg.ok());
  config::ConfigErrors errors;
  const auto w = config::ParseConfig(R"(
policy:
  name: hpa
  metrics: [{signal: q, target: {type: AverageValue, value: 1}}]
behavior:
  scaleDown:
    stabilizationWindowSeconds: -5
)",
                                     "w.yaml", errors);
  auto p = BuildPipeline(*reg, w, w.Child("policy"), 15, 0);
  EXPECT_FALSE(p.ok());
  ASSERT_EQ(errors.size(), 1u) << errors.ToStatus().message();
  EXPECT_EQ(errors.all()[0].path, "behavior.scaleDown.stabilizationWindowSeconds");
  EXPECT_EQ(errors.all()[0].line, 7);
}

TEST(HpaPolicy, ToMilliRoundsUpLikeQuantity) {
  EXPECT_EQ(ToMilli(0.3), 300);
  EXPECT_EQ(ToMilli(1.0005), 1001);
  EXPECT_EQ(ToMilli(80), 80000);
  EXPECT_EQ(ToMilli(0), 0);
}

}  // namespace
}  // namespace aiscale::decide
