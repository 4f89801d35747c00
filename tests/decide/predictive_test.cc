#include "decide/policies/predictive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/signal.h"
#include "decide/synthetic_series.h"

namespace aiscale::decide {
namespace {

constexpr double kDayS = 86400;
constexpr double kTick = 15;

WorkloadContext Ctx(double cold_start_s = 585, int min_replicas = 1) {
  WorkloadContext c;
  c.min_replicas = min_replicas;
  c.max_replicas = 1000;
  c.control_period_s = kTick;
  c.cold_start_s = cold_start_s;
  return c;
}

PredictiveConfig ParseOk(const std::string& yaml, const WorkloadContext& ctx) {
  config::ConfigErrors errs;
  config::ConfigNode root = config::ParseConfig(yaml, "p.yaml", errs);
  PredictiveConfig c = PredictivePolicy::Parse(root, ctx);
  EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
  return c;
}

// Drives the policy as the Controller would: ingest this tick's request_rate (and optionally
// queue_len), recommend, and apply a valid recommendation at once.
struct Harness {
  Harness(const std::string& yaml, const WorkloadContext& ctx) : policy(ParseOk(yaml, ctx)) {}
  Recommendation Tick(double t, std::optional<double> rate, double observed_at = -1,
                      std::optional<double> queue = std::nullopt) {
    std::vector<Observation> obs;
    if (rate)
      obs.push_back(
          {"request_rate", "", *rate, AtSeconds(observed_at < 0 ? t : observed_at), true});
    signals.Ingest(signals::kRequestRate, obs, AtSeconds(t), Seconds(45));
    if (queue) {
      signals.Ingest(signals::kQueueLen, {{"queue_len", "lb", *queue, AtSeconds(t), true}},
                     AtSeconds(t), Seconds(45));
    }
    PolicyInput in{signals,      current,      current,      AtSeconds(t),
                   std::nullopt, std::nullopt, std::nullopt, 0};
    Recommendation r = policy.Recommend(in, state);
    if (r.valid) current = r.desired;
    return r;
  }
  PredictivePolicy policy;
  WorkloadSignals signals;
  PersistentState state;
  int current = 1;
};

double FactOf(const Recommendation& r, const std::string& name) {
  for (const auto& [k, v] : r.facts) {
    if (k == name) return v;
  }
  ADD_FAILURE() << "no fact " << name;
  return NAN;
}

void ExpectCoreFacts(const Recommendation& r) {
  for (const char* f : {"forecast", "margin", "lead_s", "reactive_need"}) FactOf(r, f);
}

// Night at 20/s, a one-hour ramp to 400/s from 8:00, back down from 17:00; noise like Poisson
// counts over a 15 s scrape. At 10/s per replica and 80% utilization: 3 to 50 replicas.
double Office(double t) { return aiscale::testing::OfficeDay(t); }

constexpr const char* kBase = "name: predictive\ncapacity_per_replica: 10\n";

TEST(Predictive, ScalesUpALeadAheadOfTheReactiveRule) {
  struct Case {
    std::string name;
    std::string extra_yaml;
    double min_gain_s;  // how much earlier than the true need each level must be reached
    double max_gain_s;
  };
  // lead = 585 s cold start + 15 s period = 600 s.
  const std::vector<Case> cases = {
      {"predictive", "", 0.8 * 600, 600 + 900},
      {"reactive only (forecast never trusted)", "min_errors: 90000\nmargin_window: 63d\n", -120,
       0.3 * 600},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(std::string(kBase) + c.extra_yaml, Ctx());
    aiscale::testing::Noise noise(11);
    const std::vector<int> levels = {10, 20, 30, 40};
    std::vector<double> reached(levels.size(), -1);
    int forecast_wins = 0, ramp_ticks = 0;
    for (double t = 0; t < 2 * kDayS + 10 * 3600; t += kTick) {
      const double rate = Office(t) + std::sqrt(Office(t) * kTick) / kTick * noise.Normal();
      const Recommendation r = h.Tick(t, rate);
      ExpectCoreFacts(r);
      ASSERT_TRUE(r.valid) << r.reason;
      if (t < 2 * kDayS) continue;
      for (size_t i = 0; i < levels.size(); ++i) {
        if (reached[i] < 0 && r.desired >= levels[i]) reached[i] = t;
      }
      if (t > 2 * kDayS + 7.5 * 3600 && t < 2 * kDayS + 9 * 3600) {
        ++ramp_ticks;
        forecast_wins += r.rule == "forecast";
      }
    }
    for (size_t i = 0; i < levels.size(); ++i) {
      // When the noiseless demand first needs levels[i] replicas (8/s each at 80%).
      const double need_at = 2 * kDayS + 8 * 3600 + (levels[i] * 8.0 - 20) / 380 * 3600;
      const double gain = need_at - reached[i];
      std::cout << "[measured] " << c.name << ": " << levels[i] << " replicas " << gain
                << " s before needed\n";
      EXPECT_GE(gain, c.min_gain_s) << levels[i];
      EXPECT_LE(gain, c.max_gain_s) << levels[i];
    }
    if (c.name == "predictive") {
      EXPECT_GT(forecast_wins, ramp_ticks / 2);
    }
  }
}

TEST(Predictive, ScaleDownIsSlow) {
  struct Case {
    std::string name;
    std::string yaml;
  };
  // Reactive only (min_errors unreachable) so the numbers below are the slow-down's alone.
  const std::string reactive_only = std::string(kBase) + "min_errors: 90000\nmargin_window: 63d\n";
  {
    SCOPED_TRACE("window holds the max for scale_down_window");
    Harness h(reactive_only + "scale_down_window: 10m\n", Ctx());
    const double drop = 3600;
    for (double t = 0; t < drop; t += kTick) h.Tick(t, 400);  // 50 replicas
    EXPECT_EQ(h.current, 50);
    Recommendation r;
    for (double t = drop; t <= drop + 570; t += kTick) r = h.Tick(t, 80);  // needs 10
    EXPECT_EQ(r.desired, 50);
    EXPECT_EQ(r.rule, "hold_down");
    EXPECT_EQ(FactOf(r, "reactive_need"), 10);
    r = h.Tick(drop + 585, 80);  // the last 50 (at drop - 15 s) leaves the window now
    EXPECT_EQ(r.desired, 10);
  }
  {
    SCOPED_TRACE("rate limit: at most 10% (at least one) per minute");
    Harness h(reactive_only + "scale_down_window: 0s\nscale_down_rate: 0.1\n", Ctx());
    for (double t = 0; t < 600; t += kTick) h.Tick(t, 400);
    int prev = h.current;
    double last_change = -1e9;
    for (double t = 600; t < 600 + 3600; t += kTick) {
      h.Tick(t, 80);
      if (h.current < prev) {
        EXPECT_LE(prev - h.current, std::max(1, static_cast<int>(prev * 0.1)));
        EXPECT_GE(t - last_change, 60);
        last_change = t;
      }
      prev = h.current;
    }
    EXPECT_EQ(h.current, 10);
  }
}

TEST(Predictive, AFreshPolicyHoldsTheSizeItFoundForAWindow) {
  // A warm service (20 replicas) handed to a policy with no state: a quiet first scrape must
  // not undo the size; it may go down only once a whole scale_down_window says so.
  struct Case {
    std::string name;
    std::string window;
    double quiet_rate;
    int want_after_first;
    double down_by_s;  // by then it has gone down to the quiet need
  };
  const std::vector<Case> cases = {
      {"10 min window", "10m", 8, 20, 600},
      {"no window: follows the rule at once", "0s", 8, 1, 0},
      {"demand above the size scales up at once", "10m", 400, 50, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(std::string(kBase) + "scale_down_window: " + c.window + "\n", Ctx());
    h.current = 20;
    EXPECT_EQ(h.Tick(0, c.quiet_rate).desired, c.want_after_first);
    for (double t = kTick; t < c.down_by_s - kTick; t += kTick) {
      EXPECT_GE(h.Tick(t, c.quiet_rate).desired, c.want_after_first) << "t=" << t;
    }
    h.Tick(std::max(c.down_by_s, kTick), c.quiet_rate);
    EXPECT_EQ(h.current, c.quiet_rate == 400 ? 50 : 1);
  }
}

TEST(Predictive, MissingDemandNeverScalesDown) {
  struct Case {
    std::string name;
    std::optional<double> rate;
    double observed_ago_s;
    std::optional<double> queue;  // reactive signal when the rule uses queue_len
    bool want_valid;
    int want_desired;  // when valid
  };
  const std::vector<Case> cases = {
      {"no observation", std::nullopt, 0, std::nullopt, false, 0},
      {"stale observation", 80.0, 100, std::nullopt, false, 0},
      {"NaN", NAN, 0, std::nullopt, false, 0},
      {"negative", -5.0, 0, std::nullopt, false, 0},
      {"missing demand, queue says scale up", std::nullopt, 0, 600.0, true, 30},
      {"missing demand, queue says less", std::nullopt, 0, 10.0, false, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const bool queue_rule = c.queue.has_value();
    const std::string yaml =
        std::string(kBase) + (queue_rule ? "reactive:\n  signal: queue_len\n  target: 20\n" : "");
    Harness h(yaml, Ctx());
    for (double t = 0; t < 4 * 3600; t += kTick)
      h.Tick(t, 200, -1, c.queue ? std::optional(100.0) : std::nullopt);
    const int before = h.current;
    ASSERT_GE(before, 25);
    const double t = 4 * 3600;
    const Recommendation r = h.Tick(t, c.rate, t - c.observed_ago_s, c.queue);
    ExpectCoreFacts(r);
    EXPECT_EQ(r.valid, c.want_valid) << r.reason;
    if (c.want_valid) {
      EXPECT_EQ(r.desired, c.want_desired);
    } else {
      EXPECT_EQ(r.rule, "missing_data");
    }
    EXPECT_GE(h.current, before);
  }
}

// Restored state is input (a store written by another version, or garbled): a scale-down
// window holding NaN read as 0 replicas for good, one out of order held the minimum for its
// window, and a NaN bucket index or forecaster index kept the gap fill looping for good.
TEST(Predictive, GarbledRestoredStateNeitherScalesToMinNorHangs) {
  struct Case {
    std::string name;
    std::vector<double> t, v;  // the scale-down window, offsets from the first tick
    std::string key;           // another key, garbled ("" none)
    std::vector<double> value;
  };
  const double nan = std::nan("");
  const std::vector<Case> cases = {
      {"NaN window", {nan}, {nan}, "", {}},
      {"window sizes rising", {-30, -15}, {1, 50}, "", {}},
      {"window time ahead", {1e12}, {1}, "", {}},
      {"NaN open bucket", {-30}, {20}, "agg", {nan, 0, 0}},
      {"open bucket far ahead", {-30}, {20}, "agg", {1e15, 0, 0}},
      {"NaN forecaster index", {-30}, {20}, "hw.scalars", {0, 0, 1, nan, 0, 0, 0, 0, 0, 0}},
      {"forecaster index at the int64 floor",
       {-30},
       {20},
       "hw.scalars",
       {0, 0, 1, -9.2e18, 0, 0, 0, 0, 0, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(kBase, Ctx());
    h.current = 20;
    const double t0 = 1000 * kTick;
    for (double& t : h.state.Vec("sd.t") = c.t) t += t0;
    h.state.Vec("sd.v") = c.v;
    if (!c.key.empty()) h.state.Vec(c.key) = c.value;
    int lowest = h.current;
    for (double t = t0; t < t0 + 20 * kTick; t += kTick) {
      const Recommendation r = h.Tick(t, 180);  // 180/s at 10/s per replica, 0.8: 23 replicas
      EXPECT_TRUE(r.valid) << r.reason;
      if (r.valid) lowest = std::min(lowest, r.desired);
    }
    EXPECT_GE(lowest, 20);
  }
}

// A custom demand signal has no range: a negative value is not a demand (it would forecast
// below zero and size the service to its minimum); it holds as missing data does.
TEST(Predictive, ANegativeCustomDemandHolds) {
  PredictivePolicy policy(
      ParseOk("name: predictive\nsignal: inflight\ncapacity_per_replica: 10\n", Ctx()));
  WorkloadSignals signals;
  PersistentState state;
  int current = 1;
  for (double t = 0; t <= 3600; t += kTick) {
    const double v = t < 3600 ? 200 : -5000;
    signals.Ingest("inflight", {{"inflight", "", v, AtSeconds(t), true}}, AtSeconds(t),
                   Seconds(45));
    PolicyInput in{signals,      current,      current,      AtSeconds(t),
                   std::nullopt, std::nullopt, std::nullopt, 0};
    const Recommendation r = policy.Recommend(in, state);
    if (r.valid) current = r.desired;
    if (t == 3600) {
      EXPECT_EQ(r.rule, "missing_data") << r.reason;
      EXPECT_NE(r.reason.find("negative"), std::string::npos) << r.reason;
    }
  }
  EXPECT_GE(current, 25);
}

TEST(Predictive, FallsBackToReactiveWithoutHistory) {
  Harness h(kBase, Ctx());
  Recommendation r = h.Tick(0, 100);  // 100/s at 8/s per replica: 13
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.rule, "fallback_reactive");
  EXPECT_EQ(r.desired, 13);
  EXPECT_EQ(FactOf(r, "forecast_trusted"), 0);
  EXPECT_NE(r.reason.find("not trusted"), std::string::npos) << r.reason;
  // After min_errors (60) scored buckets plus the 11-bucket horizon the forecast takes part.
  for (double t = kTick; t < 80 * 60; t += kTick) r = h.Tick(t, 100);
  EXPECT_EQ(FactOf(r, "forecast_trusted"), 1);
  EXPECT_NE(r.rule, "fallback_reactive");
  EXPECT_NEAR(FactOf(r, "forecast"), 100, 1);
}

TEST(Predictive, LeadComesFromTheWorkload) {
  struct Case {
    std::string name;
    std::string yaml;
    double cold_start;
    double want_lead;
    int want_horizon;  // buckets
  };
  const std::vector<Case> cases = {
      {"cold start + period", kBase, 120, 135, 3},
      {"override", std::string(kBase) + "lead: 5m\n", 120, 300, 6},
      {"no cold start", kBase, 0, 15, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(c.yaml, Ctx(c.cold_start));
    EXPECT_EQ(h.policy.config().lead_s, c.want_lead);
    EXPECT_EQ(h.policy.config().horizon_buckets(), c.want_horizon);
    EXPECT_EQ(FactOf(h.Tick(0, 10), "lead_s"), c.want_lead);
  }
}

TEST(Predictive, ScalesToZeroOnlyWhenTheWorkloadAllows) {
  struct Case {
    std::string name;
    int min_replicas;
    int want_idle;
  };
  const std::vector<Case> cases = {{"min_replicas 0", 0, 0}, {"min_replicas 1", 1, 1}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(kBase, Ctx(585, c.min_replicas));
    double t = 0;
    for (; t < 3 * 3600; t += kTick) h.Tick(t, 40);  // 5 replicas, forecast trusted
    Recommendation r;
    double zero_at = -1;
    for (; t < 6 * 3600; t += kTick) {
      r = h.Tick(t, 0);
      if (zero_at < 0 && r.desired == c.want_idle) zero_at = t;
    }
    EXPECT_EQ(r.desired, c.want_idle) << r.reason;
    // Never before the demand has been gone for the whole scale-down window.
    EXPECT_GE(zero_at, 3 * 3600 + 600);
    // The first request after idling needs a replica at once.
    r = h.Tick(t, 0.05);
    EXPECT_GE(r.desired, 1);
  }
}

TEST(Predictive, ConfigErrorsNameTheField) {
  struct Case {
    std::string name;
    std::string body;  // under `policy:`
    std::string want;  // substring of one error
  };
  const std::vector<Case> cases = {
      {"capacity required", "  name: predictive\n",
       "policy: missing required field 'capacity_per_replica'"},
      {"capacity positive", "  name: predictive\n  capacity_per_replica: 0\n",
       "policy.capacity_per_replica: must be > 0"},
      {"unknown field", "  name: predictive\n  capacity_per_replica: 1\n  bogus: 1\n",
       "policy.bogus: unknown field 'bogus'"},
      {"quantile range", "  name: predictive\n  capacity_per_replica: 1\n  quantile: 0.9999\n",
       "policy.quantile: must be <= 0.999"},
      {"season vs bucket", "  name: predictive\n  capacity_per_replica: 1\n  season: 90s\n",
       "policy.season: must be a multiple of bucket"},
      {"season too long", "  name: predictive\n  capacity_per_replica: 1\n  season: 30d\n",
       "policy.season: is more than 20160 buckets"},
      {"long season needs season",
       "  name: predictive\n  capacity_per_replica: 1\n  season: none\n  long_season: 7d\n",
       "policy.long_season: needs a season"},
      {"reactive target required off the demand signal",
       "  name: predictive\n  capacity_per_replica: 1\n  reactive:\n    signal: queue_len\n",
       "policy.reactive: missing required field 'target'"},
      {"reactive unknown field",
       "  name: predictive\n  capacity_per_replica: 1\n  reactive:\n    trget: 3\n",
       "policy.reactive.trget: unknown field"},
      {"smoothing bounds",
       "  name: predictive\n  capacity_per_replica: 1\n  smoothing:\n    season: 2\n",
       "policy.smoothing.season: must be <= 1"},
      {"smoothing durations",
       "  name: predictive\n  capacity_per_replica: 1\n  smoothing:\n    level: fast\n",
       "policy.smoothing.level: must be a duration"},
      {"margin mode", "  name: predictive\n  capacity_per_replica: 1\n  margin: huge\n",
       "policy.margin: must be one of relative, absolute"},
      {"window vs min_errors",
       "  name: predictive\n  capacity_per_replica: 1\n  margin_window: 10m\n",
       "policy.margin_window: holds fewer errors than min_errors"},
      {"negative lead", "  name: predictive\n  capacity_per_replica: 1\n  lead: -1\n",
       "policy.lead: must be >= 0"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errs;
    config::ConfigNode root = config::ParseConfig("policy:\n" + c.body, "w.yaml", errs);
    PredictivePolicy::Parse(root.Child("policy"), Ctx());
    std::string all = errs.ToStatus().message();
    EXPECT_NE(all.find(c.want), std::string::npos) << all;
    EXPECT_NE(all.find("w.yaml:"), std::string::npos) << all;
  }
}

// (A month of ticks, timed, is bench/predictive_bench.cc.)
TEST(Predictive, StateCarriesAcrossInstances) {
  // The policy object keeps nothing: a fresh instance per tick over the same PersistentState
  // decides exactly as one long-lived instance.
  Harness a(kBase, Ctx()), b(kBase, Ctx());
  aiscale::testing::Noise noise(5);
  for (double t = 0; t < kDayS + 3600; t += kTick) {
    const double rate = Office(t) * (1 + 0.02 * noise.Normal());
    const Recommendation ra = a.Tick(t, rate);
    b.policy = PredictivePolicy(ParseOk(kBase, Ctx()));
    const Recommendation rb = b.Tick(t, rate);
    ASSERT_EQ(ra.desired, rb.desired) << t;
    ASSERT_EQ(ra.facts, rb.facts) << t;
  }
  EXPECT_EQ(a.state, b.state);
}

}  // namespace
}  // namespace aiscale::decide
