#include "decide/policies/slo.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/config/config_node.h"
#include "core/signal.h"
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

// One tick's signals as the vllm preset reports them for the whole service.
struct Tick {
  double rate = 0;
  double queue = 0;
  double ttft_p99_s = 0;
  double latency_p99_s = 0;
  double kv_usage = -1;  // mean KV cache in use per replica, 0-1; < 0: not reported
};

// Steps an slo policy with the Controller's inputs; the replicas follow the recommendation at
// once. A replica model stands in for the service: p99s grow with the load per replica and
// the SLO (ttft 2 s, latency 20 s) holds up to 36 requests/s per replica; with `kv`, the
// replicas also report their KV cache in use, full at 48 requests/s per replica.
struct Harness {
  explicit Harness(int start, bool kv = false, std::string extra = "", int min_replicas = 1)
      : report_kv(kv) {
    config::ConfigErrors errs;
    const config::ConfigNode node = config::ParseConfig(
        "name: slo\nslo: {ttft_s: 2, latency_s: 20}\n" + extra, "policy.yaml", errs);
    WorkloadContext ctx;
    ctx.cold_start_s = 120;
    ctx.min_replicas = min_replicas;
    policy = SloPolicy::Make(node, ctx);
    EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
    current = ready = start;
  }
  Tick Modelled(double rate, int replicas) const {
    const double load = rate / std::max(replicas, 1);
    return {rate, 0, 0.2 + 0.05 * load, 2 + 0.5 * load, report_kv ? std::min(1.0, load / 48) : -1};
  }
  Recommendation At(const Tick& x) {
    t += 15;
    const TimePoint now = AtSeconds(t);
    auto one = [&](std::string_view name, double v) {
      signals.Ingest(name, {{std::string(name), "", v, now, true}}, now, Seconds(60));
    };
    if (demand_missing) {
      signals.Ingest(demand_signal, {}, now, Seconds(60));
    } else {
      one(demand_signal, x.rate);
    }
    one(signals::kQueueLen, x.queue);
    one(signals::kTtftP99S, x.ttft_p99_s);
    one(signals::kLatencyP99S, x.latency_p99_s);
    if (x.kv_usage >= 0) one(signals::kKvCacheUsage, x.kv_usage);
    if (quantiles_stale) {  // the last readings are two minutes old: older than the 60 s limit
      for (std::string_view name : {signals::kTtftP99S, signals::kLatencyP99S}) {
        signals.Ingest(name, {{std::string(name), "", 0.5, now - Seconds(120), true}}, now,
                       Seconds(60));
      }
    }
    PolicyInput in{signals, current, ready, now, std::nullopt, std::nullopt, std::nullopt, 0};
    in.asleep = asleep;
    in.asleep_ready = asleep_ready;
    Recommendation r = policy->Recommend(in, state);
    if (r.valid && follow) current = ready = r.desired;
    return r;
  }
  // Two hours of a steady 100 requests/s: long enough to learn a capacity.
  void WarmUp() {
    for (int i = 0; i < 480; ++i) At(Modelled(100, current));
  }
  WorkloadSignals signals;
  PersistentState state;
  std::unique_ptr<Policy> policy;
  bool report_kv = false;
  int current = 0;
  int ready = 0;
  int asleep = 0;
  int asleep_ready = 0;
  bool follow = true;  // the replicas follow the recommendation (else the test sets the counts)
  double t = 0;
  std::string demand_signal{signals::kRequestRate};
  bool demand_missing = false;   // the demand signal has no observation this tick
  bool quantiles_stale = false;  // the TTFT and latency quantiles are stale this tick
};

TEST(SloPolicy, LearnsACapacityFromTheSignalsAlone) {
  Harness h(10);
  h.WarmUp();
  const Recommendation r = h.At(h.Modelled(100, h.current));
  const double c = FactOf(r, "capacity");
  EXPECT_GT(c, 0) << r.reason;
  EXPECT_LE(c, 36 * 1.1) << "above the load at which the SLO breaks: " << r.reason;
  EXPECT_GE(r.desired, static_cast<int>(std::ceil(100 / 36.0))) << r.reason;
}

// Sized with headroom, the replicas never run near their capacity, so the loads that held stay
// under it; KV cache usage lets the estimate rise toward it. Two hours at 100/s, then the
// estimate against the model's capacity within the margin: the load at which its p99s reach
// (1 - margin) x SLO, 30/s per replica at the default margin 0.15 (36/s at the SLO itself).
TEST(SloPolicy, KvCacheUsageLetsTheEstimateReachTheCapacity) {
  constexpr double kWithinMargin = 30;  // 0.2 + 0.05 x 30 = 0.85 x 2 s; 2 + 0.5 x 30 = 0.85 x 20 s
  struct Row {
    bool kv;
    double min_share, max_share;  // of kWithinMargin
  };
  for (const Row& row : {Row{false, 0, 0.8}, Row{true, 0.9, 1.1}}) {
    SCOPED_TRACE(row.kv ? "KV cache usage reported" : "no utilization");
    Harness h(10, row.kv);
    h.WarmUp();
    const Recommendation r = h.At(h.Modelled(100, h.current));
    const double c = FactOf(r, "capacity");
    EXPECT_GE(c, row.min_share * kWithinMargin) << r.reason;
    EXPECT_LE(c, row.max_share * kWithinMargin) << r.reason;
  }
}

// Bad input is held at the last good estimate with the reason in the Decision, and never
// scales down.
struct BadCase {
  const char* name;
  Tick tick;
  const char* rule;
  const char* reason_has;
};

TEST(SloPolicy, BadInputHoldsTheLastGoodEstimate) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<BadCase> cases = {
      {"negative queue", {100, -5, 0.5, 5}, "bad_input", "queue_len is invalid"},
      {"quantiles out of order", {100, 0, 9, 5}, "bad_input", "quantiles out of order"},
      // A counter that went backwards gives a negative rate.
      {"counter backwards", {-40, 0, 0.5, 5}, "bad_input", "request_rate is invalid"},
      {"NaN latency", {100, 0, 0.5, nan}, "bad_input", "latency_p99_s is invalid"},
      {"KV cache usage above 1", {100, 0, 0.5, 5, 1.7}, "bad_input", "kv_cache_usage is invalid"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(10);
    h.WarmUp();
    const Recommendation before = h.At(h.Modelled(100, h.current));
    const int size = h.current;
    const Recommendation r = h.At(c.tick);
    EXPECT_EQ(r.rule, c.rule) << r.reason;
    EXPECT_NE(r.reason.find(c.reason_has), std::string::npos) << r.reason;
    EXPECT_GE(r.desired, size) << r.reason;
    EXPECT_DOUBLE_EQ(FactOf(r, "capacity"), FactOf(before, "capacity")) << r.reason;
  }
}

// One window reporting a fourfold load that the SLO held must not raise the capacity enough to
// scale down when the load returns.
TEST(SloPolicy, OneSampleJumpUpDoesNotScaleDown) {
  Harness h(10);
  h.WarmUp();
  const Recommendation before = h.At(h.Modelled(100, h.current));
  const int size = h.current;
  const Recommendation jump = h.At({400, 0, 0.3, 3});
  EXPECT_LE(FactOf(jump, "capacity"), FactOf(before, "capacity") * 1.05) << jump.reason;
  EXPECT_GE(jump.desired, size) << jump.reason;
  const Recommendation after = h.At(h.Modelled(100, h.current));
  EXPECT_GE(after.desired, size) << after.reason;
}

// A window where every replica breaks the SLO at once (a stuck GPU, a bad deploy) moves the
// estimate by at most the bounded fall, never to 0.
TEST(SloPolicy, CapacityNeverCollapsesToZeroOnOneWindow) {
  Harness h(10);
  h.WarmUp();
  const Recommendation before = h.At(h.Modelled(100, h.current));
  const double c0 = FactOf(before, "capacity");
  ASSERT_GT(c0, 0);
  const int size = h.current;
  const Recommendation r = h.At({100, 500, 200, 400});
  EXPECT_GE(FactOf(r, "capacity"), c0 * 0.5) << r.reason;
  EXPECT_GT(FactOf(r, "capacity"), 0) << r.reason;
  EXPECT_GE(r.desired, size) << "a breach with requests waiting never scales down: " << r.reason;
}

TEST(SloPolicy, MissingDemandHolds) {
  Harness h(10);
  h.WarmUp();
  const int size = h.current;
  h.t += 15;
  const TimePoint now = AtSeconds(h.t);
  h.signals.Ingest(signals::kRequestRate, {}, now, Seconds(60));
  PolicyInput in{h.signals, size, size, now, std::nullopt, std::nullopt, std::nullopt, 0};
  const Recommendation r = h.policy->Recommend(in, h.state);
  EXPECT_EQ(r.rule, "missing_data");
  EXPECT_EQ(r.desired, size);
}

// A scale-down is weighed against the peaks of the last break-even (cold start + drain): after a
// reset of the state (a new clock epoch) or a gap in the demand data those are not known, so
// the size holds until a break-even's worth of demand (155 s here) has been watched again.
TEST(SloPolicy, NoScaleDownUntilABreakEvenOfDemandIsWatched) {
  struct Row {
    const char* name;
    bool reset;  // else a gap: 12 minutes of missing demand
  };
  for (const Row& row :
       {Row{"clock epoch reset mid scale-up", true}, Row{"gap in demand", false}}) {
    SCOPED_TRACE(row.name);
    Harness h(10);
    h.WarmUp();
    const int size = h.current;
    ASSERT_GT(size, 4);
    if (row.reset) {
      h.t = 0;             // a new monotonic epoch: the policy starts over
      h.ready = size - 3;  // replicas still starting
    } else {
      h.demand_missing = true;
      for (int i = 0; i < 48; ++i) EXPECT_GE(h.At({}).desired, size);
      h.demand_missing = false;
    }
    // Demand back at 60% of what the size was set for: after the hold, fewer replicas do.
    h.follow = false;
    double first_down_s = -1;
    const double back_s = h.t;
    for (int i = 0; i < 40 && first_down_s < 0; ++i) {
      const Recommendation r = h.At(h.Modelled(60, h.ready));
      if (r.desired < size) first_down_s = h.t - back_s;
    }
    EXPECT_GE(first_down_s, 155) << "scaled down before watching a break-even of demand";
    EXPECT_GT(first_down_s, 0) << "never scaled down once it had";
  }
}

// A window whose quantiles are stale (or failed, or from some replicas only) says nothing about
// the SLO: the estimate, rising toward the KV cache's extrapolation before, holds until they are
// fresh again.
TEST(SloPolicy, StaleQuantilesTeachNothing) {
  Harness h(10, /*kv=*/true);
  double before = FactOf(h.At(h.Modelled(100, h.current)), "capacity");
  bool rising = false;
  for (int i = 0; i < 200 && !rising; ++i) {
    const double now = FactOf(h.At(h.Modelled(100, h.current)), "capacity");
    rising = before > 0 && now > before;
    before = now;
  }
  ASSERT_TRUE(rising) << "the estimate never rose toward the KV cache's extrapolation";
  h.quantiles_stale = true;
  Recommendation r = h.At(h.Modelled(100, h.current));
  const double held = FactOf(r, "capacity");
  for (int i = 0; i < 20; ++i) {
    r = h.At(h.Modelled(100, h.current));
    EXPECT_DOUBLE_EQ(FactOf(r, "capacity"), held) << r.reason;
  }
  EXPECT_NE(r.reason.find("the window's SLO is not known"), std::string::npos) << r.reason;
  h.quantiles_stale = false;
  for (int i = 0; i < 8; ++i) r = h.At(h.Modelled(100, h.current));
  EXPECT_GT(FactOf(r, "capacity"), held) << r.reason;
}

// A custom demand signal may take any value: a negative one is held as bad input, never read as
// no demand.
TEST(SloPolicy, NegativeCustomDemandIsBadInput) {
  Harness h(10, false, "signal: rps\n");
  h.demand_signal = "rps";
  h.WarmUp();
  const int size = h.current;
  for (int i = 0; i < 46; ++i) {
    const Recommendation r = h.At({-40, 0, 0.5, 5});
    EXPECT_EQ(r.rule, "bad_input") << r.reason;
    EXPECT_NE(r.reason.find("rps is negative"), std::string::npos) << r.reason;
    EXPECT_GE(r.desired, size) << r.reason;
  }
}

// Scaled to zero nothing reports quantiles, so no breach can show; demand alone starts a replica
// (and none while there is none).
TEST(SloPolicy, DemandStartsAServiceAtZero) {
  Harness h(0, false, "", /*min_replicas=*/0);
  h.follow = false;
  EXPECT_EQ(h.At({0, 0, 0, 0}).desired, 0);
  const Recommendation r = h.At({50, 490, 0, 0});
  EXPECT_GE(r.desired, 1) << r.reason;
}

// Restored state that does not add up (a [time, value] history of odd length, a quantile ring
// whose head is out of range) starts that piece over: no NaN reaches a fact, and the size is not
// lost.
TEST(SloPolicy, RestoredStateOfTheWrongShapeStartsThatPieceOver) {
  for (const char* key : {"slo.d.raw", "slo.d.recent", "slo.h.err.meta"}) {
    SCOPED_TRACE(key);
    Harness h(10);
    h.WarmUp();
    const int size = h.current;
    h.state.values[key] = {key == std::string("slo.h.err.meta") ? 1e9 : 5.0};
    for (int i = 0; i < 80; ++i) {
      const Recommendation r = h.At(h.Modelled(100, h.current));
      for (const auto& [name, v] : r.facts) EXPECT_TRUE(std::isfinite(v)) << name;
      EXPECT_GE(r.desired, size - 1) << r.reason;
    }
  }
}

TEST(SloPolicy, WarmTierSplitsTheSizeAndStaysWithinMax) {
  config::ConfigErrors errs;
  const config::ConfigNode node = config::ParseConfig(
      "name: slo\nslo: {ttft_s: 2, latency_s: 20}\nwarm: {wake: 5s, max_asleep: 3}\n",
      "policy.yaml", errs);
  WorkloadContext ctx;
  ctx.cold_start_s = 300;
  ctx.max_replicas = 20;
  const SloConfig cfg = SloPolicy::Parse(node, ctx);
  ASSERT_TRUE(errs.empty()) << errs.ToStatus().message();
  EXPECT_TRUE(cfg.warm.on);
  EXPECT_DOUBLE_EQ(cfg.warm.wake_s, 5);
  Harness h(10);
  h.policy = std::make_unique<SloPolicy>(cfg);
  for (int i = 0; i < 480; ++i) {
    const Recommendation r = h.At(h.Modelled(100, h.current));
    if (!r.valid || r.rule == "learning") continue;
    EXPECT_GE(r.asleep, 0) << r.reason;
    EXPECT_LE(r.asleep, 3) << r.reason;
    EXPECT_LE(r.desired + r.asleep, 20) << r.reason;
  }
}

// The wake lead is measured, not taken from `wake:`: sleepers woken into the awake count that
// take 60 s to serve (a slow host-to-GPU copy, not vLLM's seconds) move the awake sizing's lead
// a third of the way from the configured 5 s toward 60 s per wake.
TEST(SloPolicy, WarmTierMeasuresTheWake) {
  config::ConfigErrors errs;
  const config::ConfigNode node = config::ParseConfig(
      "name: slo\nslo: {ttft_s: 2, latency_s: 20}\nwarm: {wake: 5s}\n", "policy.yaml", errs);
  WorkloadContext ctx;
  ctx.cold_start_s = 300;
  ctx.max_replicas = 50;
  Harness h(4);
  h.policy = SloPolicy::Make(node, ctx);
  ASSERT_TRUE(errs.empty()) << errs.ToStatus().message();
  h.WarmUp();
  h.follow = false;
  double wake_s = 5;
  for (int wake = 0; wake < 3; ++wake) {
    h.current = h.ready = 4;
    h.asleep = h.asleep_ready = 3;
    h.At(h.Modelled(100, 4));
    h.current = 6;  // two woken
    h.asleep = h.asleep_ready = 1;
    for (int i = 0; i < 4; ++i) h.At(h.Modelled(100, 4));
    h.ready = 6;  // 60 s after the wake was asked for
    const Recommendation r = h.At(h.Modelled(100, 6));
    wake_s += (60 - wake_s) / 3;
    EXPECT_NEAR(FactOf(r, "warm_lead_s"), wake_s + 15, 1e-6) << r.reason;
    EXPECT_EQ(FactOf(r, "wake_measurements"), wake + 1) << r.reason;
  }
}

// Sleepers insure past the awake sizing: with `reserve` times the cold-lead headroom more
// demand covered, the same steady load keeps more replicas asleep, and none more awake.
TEST(SloPolicy, WarmReserveKeepsMoreAsleepNotMoreAwake) {
  auto run = [](const char* reserve) {
    config::ConfigErrors errs;
    const config::ConfigNode node = config::ParseConfig(
        std::string("name: slo\nslo: {ttft_s: 2, latency_s: 20}\nwarm: {wake: 5s, reserve: ") +
            reserve + "}\n",
        "policy.yaml", errs);
    WorkloadContext ctx;
    ctx.cold_start_s = 300;
    ctx.max_replicas = 50;
    Harness h(10, /*kv=*/true);
    h.policy = SloPolicy::Make(node, ctx);
    EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
    Recommendation r;
    // 100/s at the ~30-36/s per replica it learns: 20 x its headroom more (~30/s) is another
    // replica whichever it learned.
    for (int i = 0; i < 480; ++i) r = h.At(h.Modelled(100, h.current));
    return r;
  };
  const Recommendation none = run("0");
  const Recommendation large = run("20");  // a steady load learns little headroom: a large reserve
  EXPECT_GT(large.asleep, none.asleep) << large.reason;
  EXPECT_LE(large.desired, none.desired) << large.reason;
}

// A bad field is an error that names it, at load.
TEST(SloPolicy, RejectsBadFieldsWithTheirPath) {
  struct Row {
    const char* yaml;
    const char* field;
  };
  const Row rows[] = {
      {"name: slo\nwarm: {wake: 5s, max_asleep: -1}\n", "max_asleep"},
      {"name: slo\nslo: {ttft_s: 30, latency_s: 20}\n", "ttft_s"},  // TTFT above latency
  };
  for (const Row& row : rows) {
    config::ConfigErrors errs;
    const config::ConfigNode node = config::ParseConfig(row.yaml, "policy.yaml", errs);
    SloPolicy::Parse(node, WorkloadContext{});
    ASSERT_FALSE(errs.empty()) << row.yaml;
    EXPECT_NE(errs.ToStatus().message().find(row.field), std::string::npos)
        << errs.ToStatus().message();
  }
}

// The headroom's quantile follows the SLO's attainment unless it is set.
TEST(SloPolicy, HeadroomQuantileFollowsTheAttainment) {
  struct Row {
    const char* yaml;
    double quantile;
  };
  for (const Row& row : {
           Row{"slo: {ttft_s: 2, latency_s: 20}", 0.98},
           Row{"slo: {ttft_s: 2, latency_s: 20, attainment: 0.999}", 0.998},
           Row{"slo: {ttft_s: 2, latency_s: 20, attainment: 0.9}", 0.8},
           Row{"slo: {ttft_s: 2, latency_s: 20}\nheadroom: {quantile: 0.9}", 0.9},
       }) {
    SCOPED_TRACE(row.yaml);
    config::ConfigErrors errs;
    const config::ConfigNode node =
        config::ParseConfig(std::string("name: slo\n") + row.yaml + "\n", "policy.yaml", errs);
    const SloConfig cfg = SloPolicy::Parse(node, WorkloadContext{});
    ASSERT_TRUE(errs.empty()) << errs.ToStatus().message();
    EXPECT_NEAR(cfg.headroom.quantile, row.quantile, 1e-12);
  }
}

}  // namespace
}  // namespace aiscale::decide
