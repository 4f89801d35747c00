// Property test (issue 27 §6): every policy, fed extreme but finite signal values, recommends a
// size in [0, kMaxReplicaCount] that its constraints bring into [min, max], and never below
// the current size while the load only grows. Pods reporting ~5e15 each once wrapped the HPA's
// int64 usage sum: the Decision read recommended=-2147483648 and scaled 4 -> 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/numeric.h"
#include "core/signal.h"
#include "core/state.h"
#include "core/workload_signals.h"
#include "decide/pipeline.h"

namespace aiscale::decide {
namespace {

constexpr int kMin = 2;
constexpr int kMax = 40;
constexpr int kCurrent = 4;
constexpr int kPods = 4;

struct PolicyCase {
  std::string name;
  std::string policy_yaml;  // the `policy:` map, indented by 2
};

const std::vector<PolicyCase>& Policies() {
  static const std::vector<PolicyCase> kCases = {
      {"hpa Pods AverageValue",
       "  name: hpa\n  metrics: [{signal: queue_len, type: Pods, target: {type: AverageValue, "
       "value: 1}}]\n"},
      {"hpa Resource Utilization",
       "  name: hpa\n  metrics: [{signal: gpu_util, type: Resource, target: {type: Utilization, "
       "value: 60}, request: 1}]\n"},
      {"hpa Resource AverageValue (custom signal)",
       "  name: hpa\n  metrics: [{signal: tokens_waiting, type: Resource, resource: memory, "
       "target: {type: AverageValue, value: 2}}]\n"},
      {"hpa External Value",
       "  name: hpa\n  metrics: [{signal: request_rate, type: External, target: {type: Value, "
       "value: 10}}]\n"},
      {"hpa Object AverageValue",
       "  name: hpa\n  metrics: [{signal: queue_len, type: Object, target: {type: AverageValue, "
       "value: 3}}]\n"},
      {"kpa", "  name: kpa\n  target: 10\n"},
      {"kpa, unlimited rate", "  name: kpa\n  target: 1\n  max_scale_up_rate: 1e300\n"},
      {"predictive", "  name: predictive\n  capacity_per_replica: 10\n"},
      {"training", "  name: training\n"},
      {"static", "  name: static\n  replicas: 4\n"},
      {"static-peak", "  name: static-peak\n"},
  };
  return kCases;
}

PolicySpec Build(const PolicyCase& c, config::ConfigErrors& errors) {
  const std::string yaml = "min_replicas: " + std::to_string(kMin) +
                           "\nmax_replicas: " + std::to_string(kMax) + "\npolicy:\n" +
                           c.policy_yaml;
  const config::ConfigNode w = config::ParseConfig(yaml, "w.yaml", errors);
  auto reg = PolicyRegistry::Default();
  EXPECT_TRUE(reg.ok());
  auto p = BuildPipeline(*reg, w, w.Child("policy"), 15, 60);
  EXPECT_TRUE(p.ok()) << p.status().message() << " " << errors.ToStatus().message();
  return p.ok() ? std::move(p).value() : PolicySpec{};
}

// `v` brought inside the signal's valid range (a bounded signal reads its bound instead).
double InRange(const std::string& signal, double v) {
  const signals::Range r = signals::ValidRange(signal);
  if (signal == signals::kPhase) return 1;  // compute
  return std::clamp(v, r.min, r.max);
}

// Feeds every signal the policy reads with `v` per pod, at `now`.
void Feed(const Policy& p, WorkloadSignals& s, double v, TimePoint now) {
  std::vector<std::string> names = p.Signals();
  for (const std::string& o : p.OptionalSignals()) names.push_back(o);
  for (const std::string& name : names) {
    std::vector<Observation> obs;
    for (int i = 0; i < kPods; ++i) {
      obs.push_back({name, "pod-" + std::to_string(i), InRange(name, v), now, true});
    }
    s.Ingest(name, obs, now, Seconds(45));
  }
}

struct Outcome {
  Recommendation rec;
  int constrained = 0;
};

Outcome Step(const PolicySpec& p, WorkloadSignals& s, PersistentState& state, double v, int tick) {
  const TimePoint now = AtSeconds(15.0 * tick);
  Feed(*p.policy, s, v, now);
  Outcome o;
  o.rec = p.policy->Recommend(
      PolicyInput{s, kCurrent, kCurrent, now, std::nullopt, std::nullopt, std::nullopt}, state);
  const int wanted = o.rec.valid ? o.rec.desired : kCurrent;
  o.constrained = p.constraints->Constrain(wanted, kCurrent, std::nullopt).desired;
  return o;
}

void ExpectBounded(const Outcome& o) {
  EXPECT_GE(o.rec.desired, 0) << o.rec.reason;
  EXPECT_LE(o.rec.desired, kMaxReplicaCount) << o.rec.reason;
  EXPECT_GE(o.constrained, kMin) << o.rec.reason;
  EXPECT_LE(o.constrained, kMax) << o.rec.reason;
}

// A load that starts where the current size is about right and only grows, up to the largest
// finite double and staying there: no tick may recommend fewer replicas than there are.
TEST(PolicyExtremeValues, GrowingLoadNeverRecommendsBelowCurrent) {
  std::vector<double> growing = {10, 1e3, 1e6, 5e15, 1e18, 1e100, 1e300, DBL_MAX};
  for (int i = 0; i < 6; ++i) growing.push_back(DBL_MAX);
  for (const PolicyCase& c : Policies()) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errors;
    const PolicySpec p = Build(c, errors);
    ASSERT_NE(p.policy, nullptr);
    WorkloadSignals s;
    PersistentState state;
    for (size_t t = 0; t < growing.size(); ++t) {
      SCOPED_TRACE("value " + std::to_string(growing[t]));
      const Outcome o = Step(p, s, state, growing[t], static_cast<int>(t));
      ExpectBounded(o);
      if (o.rec.valid) {
        EXPECT_GE(o.rec.desired, kCurrent) << o.rec.rule << ": " << o.rec.reason;
      }
      EXPECT_GE(o.constrained, kCurrent) << o.rec.reason;
    }
  }
}

// Any mix of extreme finite values (both signs for signals that allow them, denormals, zero)
// in any order: bounded, never undefined.
TEST(PolicyExtremeValues, AnyExtremeFiniteValueStaysBounded) {
  const std::vector<double> extremes = {0,    DBL_MIN, DBL_TRUE_MIN, 1e-300,  1,
                                        5e15, 9e18,    1e19,         1e300,   DBL_MAX,
                                        -1,   -5e15,   -1e300,       -DBL_MAX};
  for (const PolicyCase& c : Policies()) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errors;
    const PolicySpec p = Build(c, errors);
    ASSERT_NE(p.policy, nullptr);
    std::mt19937 rng(27);  // fixed: a failure replays
    std::uniform_int_distribution<size_t> pick(0, extremes.size() - 1);
    WorkloadSignals s;
    PersistentState state;
    for (int t = 0; t < 200; ++t) {
      const double v = extremes[pick(rng)];
      SCOPED_TRACE("tick " + std::to_string(t) + " value " + std::to_string(v));
      ExpectBounded(Step(p, s, state, v, t));
    }
  }
}

}  // namespace
}  // namespace aiscale::decide
