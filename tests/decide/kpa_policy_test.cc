#include "decide/policies/kpa.h"

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/config/config_node.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {
namespace {

double FactOf(const Recommendation& r, const std::string& name) {
  for (const auto& [k, v] : r.facts) {
    if (k == name) return v;
  }
  ADD_FAILURE() << "no fact " << name;
  return -1;
}

std::unique_ptr<Policy> MakeFromYaml(const std::string& yaml) {
  config::ConfigErrors errs;
  config::ConfigNode node = config::ParseConfig(yaml, "policy.yaml", errs);
  std::unique_ptr<Policy> p = MakeKpaPolicy(node, WorkloadContext{});
  EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
  return p;
}

// Steps a KPA policy through time with the Controller's inputs: per-instance concurrency
// observations ingested into WorkloadSignals, and a scale that follows the recommendation at
// once (every new replica is ready immediately).
struct Harness {
  explicit Harness(const std::string& yaml, int start) : policy(MakeFromYaml(yaml)) {
    current = ready = start;
  }
  // Total concurrency `total` at time `t` seconds, reported by two instances.
  Recommendation At(double t, double total) {
    const TimePoint now = AtSeconds(t);
    signals.Ingest(
        "concurrency",
        {{"concurrency", "a", total / 2, now, true}, {"concurrency", "b", total / 2, now, true}},
        now, Seconds(45));
    return Ask(now);
  }
  Recommendation Ask(TimePoint now) {
    PolicyInput in{signals, current, ready, now, std::nullopt, std::nullopt, std::nullopt, 0};
    Recommendation r = policy->Recommend(in, state);
    if (r.valid) current = ready = r.desired;
    return r;
  }
  WorkloadSignals signals;
  PersistentState state;
  std::unique_ptr<Policy> policy;
  int current = 0;
  int ready = 0;
};

constexpr const char* kTarget10 =
    "name: kpa\ntarget: 10\ntarget_utilization: 1.0\nstable_window: 60s\n";

// Like knative's TestAutoscalerScaleDownDelay: a burst enters panic, panic holds the peak
// until a stable window after the last time it was over the threshold, then it leaves.
TEST(KpaPolicy, PanicEnteredHeldAndLeftToTheSecond) {
  Harness h(kTarget10, 5);
  // Knative starts a new autoscaler in panic when more than one pod is ready.
  for (int t = 0; t <= 60; ++t) {
    SCOPED_TRACE("t=" + std::to_string(t));
    Recommendation r = h.At(t, 50);
    EXPECT_EQ(r.rule, "panic");
    EXPECT_EQ(r.desired, 5);
  }
  for (int t = 61; t < 100; ++t) {
    SCOPED_TRACE("t=" + std::to_string(t));
    Recommendation r = h.At(t, 50);
    EXPECT_EQ(r.rule, "stable");
    EXPECT_EQ(r.desired, 5);
  }
  // t=100: panic avg (5*50 + 1000) / 6 = 208.3 -> 21 pods, 21 / 5 ready >= 200%.
  Recommendation r = h.At(100, 1000);
  EXPECT_EQ(r.rule, "panic");
  EXPECT_NE(r.reason.find("entered"), std::string::npos) << r.reason;
  EXPECT_EQ(r.desired, 21);
  EXPECT_EQ(FactOf(r, "desired_stable"), 7);  // ceil((59*50 + 1000) / 60 / 10)
  // In panic the panic window drives the scale up even under the threshold.
  const std::vector<int> up = {37, 53, 69, 85, 100};  // t = 101..105
  for (int i = 0; i < 5; ++i) EXPECT_EQ(h.At(101 + i, 1000).desired, up[i]);
  for (int t = 106; t < 130; ++t) EXPECT_EQ(h.At(t, 1000).desired, 100);
  // The load drops at t=130; the panic time is still t=100 (last over the threshold).
  for (int t = 130; t <= 160; ++t) {
    SCOPED_TRACE("t=" + std::to_string(t));
    r = h.At(t, 50);
    EXPECT_EQ(r.rule, "panic");
    EXPECT_EQ(r.desired, 100);
    EXPECT_EQ(FactOf(r, "panic"), 1);
  }
  // t=161 > 100 + 60: leave panic. Stable avg (28*1000 + 32*50) / 60 = 493.3 -> 50, which is
  // also the scale-down floor of 100 / 2.
  r = h.At(161, 50);
  EXPECT_EQ(r.rule, "stable");
  EXPECT_NE(r.reason.find("left panic"), std::string::npos) << r.reason;
  EXPECT_EQ(r.desired, 50);
  EXPECT_EQ(FactOf(r, "panic"), 0);
  EXPECT_DOUBLE_EQ(FactOf(r, "stable_avg"), 493.333333);
}

TEST(KpaPolicy, ScaleToZeroOnlyAfterGracePeriod) {
  Harness h(std::string(kTarget10) + "scale_to_zero_grace_period: 30s\n", 1);
  for (int t = 0; t < 60; ++t) ASSERT_EQ(h.At(t, 5).desired, 1);
  // From t=60 no demand. The stable average is 0 once the window holds only zeros (t=119);
  // the last non-zero desire was at t=118.
  for (int t = 60; t < 119; ++t) ASSERT_EQ(h.At(t, 0).desired, 1) << "t=" << t;
  for (int t = 119; t < 148; ++t) {
    SCOPED_TRACE("t=" + std::to_string(t));
    Recommendation r = h.At(t, 0);
    EXPECT_EQ(r.rule, "scale_to_zero_grace");
    EXPECT_EQ(r.desired, 1);
    EXPECT_EQ(FactOf(r, "idle_s"), t - 118);
  }
  Recommendation r = h.At(148, 0);  // exactly 30 s after t=118
  EXPECT_EQ(r.rule, "scale_to_zero");
  EXPECT_EQ(r.desired, 0);
  EXPECT_EQ(h.current, 0);
  for (int t = 149; t < 200; ++t) ASSERT_EQ(h.At(t, 0).desired, 0);
  // Demand at zero replicas (reported by the activator, as in Knative): one pod at once.
  r = h.At(200, 5);
  EXPECT_EQ(r.desired, 1);
  // 1 panic pod on 0 ready (counted as 1) is under 200%: no panic.
  EXPECT_EQ(r.rule, "stable");
}

TEST(KpaPolicy, ActivationFromZeroUsesActivationSignal) {
  const std::string yaml = std::string(kTarget10) +
                           "activation_scale: 2\nactivation_signal: queue_len\n"
                           "allow_zero_initial_scale: true\n";
  struct Case {
    std::string name;
    std::optional<double> queue;  // nullopt: queue_len not observed
    int current;
    bool valid;
    int want;
    std::string rule;
  };
  const std::vector<Case> cases = {
      {"queue 25 needs ceil(2.5) = 3", 25.0, 0, true, 3, "activate"},
      {"queue 5 gets activation scale 2", 5.0, 0, true, 2, "activate"},
      {"empty queue at zero stays at zero", 0.0, 0, true, 0, "idle_at_zero"},
      {"no queue data holds", std::nullopt, 0, false, 0, "no_data"},
      {"starting replicas are never cut", 5.0, 4, true, 4, "activate"},
      {"empty queue while starting holds", 0.0, 3, false, 0, "no_data"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Policy> p = MakeFromYaml(yaml);
    WorkloadSignals signals;
    const TimePoint now = AtSeconds(10);
    signals.Ingest("concurrency", {}, now, Seconds(45));  // no replicas, no instances
    if (c.queue) {
      signals.Ingest("queue_len", {{"queue_len", "", *c.queue, now, true}}, now, Seconds(45));
    }
    PersistentState state;
    Recommendation r =
        p->Recommend({signals, c.current, 0, now, std::nullopt, std::nullopt, std::nullopt}, state);
    EXPECT_EQ(r.valid, c.valid);
    if (r.valid) {
      EXPECT_EQ(r.desired, c.want);
    }
    EXPECT_EQ(r.rule, c.rule);
  }
}

TEST(KpaPolicy, MissingOrStaleDataHoldsNeverScalesDown) {
  Harness h(kTarget10, 8);
  for (int t = 0; t < 100; ++t) h.At(t, 80);
  ASSERT_EQ(h.current, 8);
  // Stale: the only observation is older than the staleness.
  h.signals.Ingest("concurrency", {{"concurrency", "a", 1, AtSeconds(10), true}}, AtSeconds(100),
                   Seconds(45));
  Recommendation r = h.Ask(AtSeconds(100));
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.rule, "no_data");
  EXPECT_NE(r.reason.find("stale"), std::string::npos) << r.reason;
  h.signals.MarkFetchFailed("concurrency", "connection refused");
  r = h.Ask(AtSeconds(101));
  EXPECT_FALSE(r.valid);
  EXPECT_NE(r.reason.find("connection refused"), std::string::npos) << r.reason;
  EXPECT_EQ(h.current, 8);
}

// Restored state and a sparse history are not Knative's per-second scrapes (a read-only review
// found each): aiscale restarted keeps the state but not the history, and one sample scaled
// 10 -> 5; a last sample exactly a stable window old (still valid at 90 s staleness) averaged
// to 0 demand; a garbled last-nonzero time skipped the scale-to-zero grace.
TEST(KpaPolicy, ARestartOrASparseHistoryScalesNothingDown) {
  {
    SCOPED_TRACE("restart: state kept, history lost");
    Harness h(kTarget10, 10);
    for (int t = 0; t <= 300; t += 15) h.At(t, 100);
    ASSERT_EQ(h.current, 10);
    Harness after(kTarget10, 10);
    after.state = h.state;
    Recommendation r = after.At(315, 50);  // one sample of half the load
    EXPECT_EQ(r.desired, 10) << r.reason;
    r = after.At(330, 50);
    EXPECT_EQ(after.current, 10) << r.reason;
    for (int t = 345; t <= 480; t += 15) r = after.At(t, 50);  // it lasts: then it counts
    EXPECT_EQ(after.current, 5) << r.reason;
  }
  {
    SCOPED_TRACE("the last sample a whole window old, still valid");
    Harness h(kTarget10, 10);
    for (int t = 0; t <= 300; t += 15) h.At(t, 100);
    ASSERT_EQ(h.current, 10);
    const Recommendation r = h.Ask(AtSeconds(360.2));
    EXPECT_FALSE(r.valid) << r.reason;
    EXPECT_EQ(h.current, 10);
  }
  {
    SCOPED_TRACE("garbled last-nonzero time");
    Harness h(
        "name: kpa\ntarget: 10\ntarget_utilization: 1.0\nstable_window: 60s\n"
        "scale_to_zero_grace_period: 300s\n",
        1);
    for (int t = 0; t <= 120; t += 15) h.At(t, 5);
    Recommendation r;
    for (int t = 135; t <= 210; t += 15) r = h.At(t, 0);
    ASSERT_EQ(r.rule, "scale_to_zero_grace") << r.reason;  // idle 90 s of the 300 s grace
    h.state.Vec("kpa.last_nonzero") = {std::nan("")};
    r = h.At(225, 0);
    EXPECT_EQ(r.desired, 1) << r.reason;
  }
}

TEST(KpaPolicy, ANegativeCustomValueHolds) {
  Harness h("name: kpa\nsignal: inflight\ntarget: 10\ntarget_utilization: 1.0\n", 10);
  for (int t = 0; t <= 120; t += 15) {
    const TimePoint now = AtSeconds(t);
    h.signals.Ingest(
        "inflight",
        {{"inflight", "a", 100, now, true}, {"inflight", "b", t == 120 ? -1000.0 : 0.0, now, true}},
        now, Seconds(45));
    const Recommendation r = h.Ask(now);
    if (t == 120) {
      EXPECT_FALSE(r.valid) << r.reason;
      EXPECT_EQ(r.rule, "bad_input");
    }
  }
  EXPECT_EQ(h.current, 10);
}

// With a 15 s control period each total is held in the seconds until the next tick, so a
// steady load averages to itself instead of to 1/15 of it.
TEST(KpaPolicy, SparseTicksAverageLikeOnePerSecond) {
  Harness h(kTarget10, 1);
  Recommendation r;
  for (int t = 0; t <= 300; t += 15) r = h.At(t, 90);
  EXPECT_DOUBLE_EQ(FactOf(r, "stable_avg"), 90);
  EXPECT_DOUBLE_EQ(FactOf(r, "panic_avg"), 90);
  EXPECT_EQ(r.desired, 9);
}

// Panic and grace times survive PersistentState exactly, far from the epoch.
TEST(KpaPolicy, PanicTimeExactAcrossState) {
  const double base = 200.0 * 86400 + 0.123456789;  // 200 days: beyond double-exact ns
  Harness h(kTarget10, 1);
  const TimePoint t0 = AtSeconds(base);
  h.signals.Ingest("concurrency", {{"concurrency", "a", 100, t0, true}}, t0, Seconds(45));
  Recommendation r = h.Ask(t0);  // 10 pods on 1 ready: panic
  ASSERT_EQ(r.rule, "panic");
  ASSERT_EQ(r.desired, 10);
  const TimePoint edge = t0 + Seconds(60);
  h.signals.Ingest("concurrency", {{"concurrency", "a", 1, edge, true}}, edge, Seconds(45));
  EXPECT_EQ(h.Ask(edge).rule, "panic");
  const TimePoint after = edge + Duration(1);
  EXPECT_EQ(h.Ask(after).rule, "stable");
}

TEST(KpaPolicy, ConfigValidation) {
  struct Case {
    std::string yaml;
    std::string want;  // substring of the first error
  };
  const std::vector<Case> cases = {
      {"target: 0", "target"},
      {"target: -5", "target"},
      {"target_utilization: 0", "target_utilization"},
      {"target_utilization: 1.5", "target_utilization"},
      {"stable_window: 5s", "stable_window"},
      {"stable_window: 2h", "stable_window"},
      {"stable_window: 6.5s", "whole number of seconds"},
      {"panic_window_percentage: 0", "panic_window_percentage"},
      {"panic_window_percentage: 101", "panic_window_percentage"},
      {"panic_threshold_percentage: 100", "panic_threshold_percentage"},
      {"max_scale_up_rate: 1", "max_scale_up_rate"},
      {"max_scale_down_rate: 0.5", "max_scale_down_rate"},
      {"activation_scale: 0", "activation_scale"},
      {"scale_to_zero_grace_period: 2s", "scale_to_zero_grace_period"},
      {"allow_zero_initial_scale: maybe", "allow_zero_initial_scale"},
      {"activation_signal: concurrency", "activation_signal"},
      {"stable_windw: 60s", "stable_windw"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    config::ConfigErrors errs;
    config::ConfigNode node = config::ParseConfig("name: kpa\n" + c.yaml + "\n", "p.yaml", errs);
    MakeKpaPolicy(node, WorkloadContext{});
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs.all()[0].ToString().find(c.want), std::string::npos) << errs.all()[0].ToString();
  }
}

TEST(KpaPolicy, DefaultsAreKnatives) {
  config::ConfigErrors errs;
  config::ConfigNode node = config::ParseConfig("name: kpa\n", "p.yaml", errs);
  const KpaConfig c = KpaConfig::Parse(node);
  ASSERT_TRUE(errs.empty());
  const KpaParams p = c.Params();
  EXPECT_EQ(c.signal, "concurrency");
  EXPECT_DOUBLE_EQ(p.target, 70);
  EXPECT_DOUBLE_EQ(p.panic_threshold, 2.0);
  EXPECT_EQ(p.stable_window, Seconds(60));
  EXPECT_EQ(KpaPanicBuckets(p.stable_window, c.panic_window_percentage), 6);
  EXPECT_DOUBLE_EQ(p.max_scale_up_rate, 1000);
  EXPECT_DOUBLE_EQ(p.max_scale_down_rate, 2);
  EXPECT_EQ(p.activation_scale, 1);
  EXPECT_DOUBLE_EQ(c.scale_to_zero_grace_period_s, 30);
  EXPECT_FALSE(c.allow_zero_initial_scale);
}

TEST(KpaPolicy, RegisteredAsKpa) {
  auto reg = PolicyRegistry::Default();
  ASSERT_TRUE(reg.ok()) << reg.status().message();
  config::ConfigErrors errs;
  config::ConfigNode node = config::ParseConfig(
      "name: kpa\nsignal: request_rate\ntarget: 5\nactivation_signal: queue_len\n", "p.yaml", errs);
  auto p = reg->Create(node, WorkloadContext{});
  ASSERT_TRUE(p.ok()) << p.status().message() << errs.ToStatus().message();
  EXPECT_EQ(p->policy->Name(), "kpa");
  EXPECT_EQ(p->policy->Signals(), std::vector<std::string>{"request_rate"});
  EXPECT_EQ(p->policy->OptionalSignals(), std::vector<std::string>{"queue_len"});
}

}  // namespace
}  // namespace aiscale::decide
