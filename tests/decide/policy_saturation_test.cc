// Every policy's output saturates before it becomes an int (issue 11): a demand that needs
// 1e12 replicas must recommend the most a workload may have, never a wrapped or truncated
// value (a cast past INT_MAX gave INT_MIN on x86, and max(1, INT_MIN) recommended 1 — a
// scale-down to the floor at peak load in live mode).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/numeric.h"
#include "core/state.h"
#include "core/workload_signals.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {
namespace {

struct Case {
  std::string name;
  std::string policy_yaml;
  std::string signal;
  double per_instance;  // the value each of two instances reports
  int current;
};

// Feeds the signal for a few ticks (so windowed policies have data) and returns the last
// valid recommendation.
Recommendation Drive(const Case& c) {
  config::ConfigErrors errs;
  const config::ConfigNode node = config::ParseConfig(c.policy_yaml, "p.yaml", errs);
  auto registry = PolicyRegistry::Default();
  EXPECT_TRUE(registry.ok());
  WorkloadContext ctx;
  ctx.min_replicas = 1;
  ctx.max_replicas = 50;
  ctx.control_period_s = 15;
  auto made = registry->Create(node, ctx);
  EXPECT_TRUE(made.ok()) << made.status().message() << errs.ToStatus().message();
  if (!made.ok()) return {};
  WorkloadSignals signals;
  PersistentState state;
  Recommendation last;
  for (int i = 0; i < 8; ++i) {
    const TimePoint now = AtSeconds(15.0 * i);
    signals.Ingest(
        c.signal,
        {{c.signal, "a", c.per_instance, now, true}, {c.signal, "b", c.per_instance, now, true}},
        now, Seconds(45));
    PolicyInput in{signals, c.current, c.current, now, std::nullopt, std::nullopt, std::nullopt, 0};
    Recommendation r = made->policy->Recommend(in, state);
    if (r.valid) last = r;
  }
  return last;
}

TEST(PolicySaturation, AHugeNeedRecommendsTheMostNeverWraps) {
  const std::vector<Case> cases = {
      {"predictive, 1e13 requests/s", "name: predictive\ncapacity_per_replica: 10\n",
       "request_rate", 5e12, 4},
      {"predictive, 1e300 requests/s", "name: predictive\ncapacity_per_replica: 10\n",
       "request_rate", 1e300, 4},
      {"kpa, 1e15 in flight", "name: kpa\ntarget: 10\nmax_scale_up_rate: 1e12\n", "concurrency",
       5e14, 4},
      {"kpa, 1e300 in flight", "name: kpa\ntarget: 1\nmax_scale_up_rate: 1e300\n", "concurrency",
       1e300, 4},
      {"hpa, value 1e15 per pod",
       "name: hpa\nmetrics: [{signal: queue_len, type: Pods, target: {type: AverageValue, value: "
       "1}}]\n",
       "queue_len", 1e15, 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Recommendation r = Drive(c);
    ASSERT_TRUE(r.valid) << r.reason;
    // Saturated high, so the constraints clamp it to max_replicas; never a small number.
    EXPECT_GE(r.desired, 50) << r.reason;
    EXPECT_LE(r.desired, std::numeric_limits<int>::max());
  }
}

TEST(PolicySaturation, CorruptRestoredStateSaturates) {
  // State is data read back from a store: a foreign or corrupt value must not be cast blindly.
  config::ConfigErrors errs;
  const config::ConfigNode node = config::ParseConfig("name: static-peak\n", "p.yaml", errs);
  auto registry = PolicyRegistry::Default();
  ASSERT_TRUE(registry.ok());
  auto made = registry->Create(node, WorkloadContext{});
  ASSERT_TRUE(made.ok()) << made.status().message();
  WorkloadSignals signals;
  for (double stored : {1e300, -1e300, std::numeric_limits<double>::quiet_NaN()}) {
    SCOPED_TRACE(stored);
    PersistentState state;
    state.Set("replicas", stored);
    PolicyInput in{signals, 3, 3, AtSeconds(0), std::nullopt, std::nullopt, std::nullopt, 0};
    const Recommendation r = made->policy->Recommend(in, state);
    EXPECT_GE(r.desired, 0);
    EXPECT_LE(r.desired, kMaxReplicaCount);
  }
}

}  // namespace
}  // namespace aiscale::decide
