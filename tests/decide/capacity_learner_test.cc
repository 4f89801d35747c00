#include "decide/serving/capacity_learner.h"

#include <string>

#include <gtest/gtest.h>

#include "core/state.h"

namespace aiscale::decide::serving {
namespace {

// Windows every 15 s at one load per replica, each within the SLO (ratio 0.3), reporting
// `util` of the busiest resource.
CapacityState Feed(CapacityLearner& l, double& t, int windows, double load, double util) {
  CapacityState out;
  for (int i = 0; i < windows; ++i) {
    t += 15;
    CapacitySample s;
    s.load = load;
    s.ttft_p99_s = 0.6;
    s.latency_p99_s = 6;
    s.utilization = util;
    out = l.Observe(s, t);
  }
  return out;
}

// The ceiling comes from how full the replicas are: a lightly used replica lets the estimate
// rise past the loads that held (at most twice them); one reported past the fill at the same
// load brings the estimate back down, boundedly, and never under a load that held.
TEST(CapacityLearner, UtilizationRaisesAndLowersTheCeiling) {
  CapacityParams p;  // SLO 2 s / 20 s, fill 0.75
  PersistentState state;
  CapacityLearner l(p, state, "c.");
  double t = 0;
  const CapacityState light = Feed(l, t, 60, 10, 0.2);
  EXPECT_NEAR(light.ceiling, 10 * 0.75 / 0.2, 0.5) << light.reason;
  EXPECT_GT(light.estimate, 1.5 * 10) << light.reason;
  EXPECT_LE(light.estimate, 2 * light.held_at + 1e-9) << light.reason;

  const CapacityState full = Feed(l, t, 40, 10, 0.95);
  EXPECT_LT(full.ceiling, 10) << full.reason;
  EXPECT_LT(full.estimate, 0.6 * light.estimate) << full.reason;
  EXPECT_GE(full.estimate, full.held_at) << full.reason;
}

// Windows too idle to extrapolate from (under util_min), or without a utilization at all,
// leave no ceiling: the estimate only probes a bin beyond the loads that held.
TEST(CapacityLearner, NoCeilingFromIdleOrUnreportedReplicas) {
  for (const double util : {0.05, -1.0}) {
    SCOPED_TRACE(util);
    CapacityParams p;
    PersistentState state;
    CapacityLearner l(p, state, "c.");
    double t = 0;
    CapacityState out;
    for (int i = 0; i < 60; ++i) {
      t += 15;
      CapacitySample s;
      s.load = 10;
      s.ttft_p99_s = 0.6;
      if (util >= 0) s.utilization = util;
      out = l.Observe(s, t);
    }
    EXPECT_EQ(out.ceiling, 0) << out.reason;
    EXPECT_LE(out.estimate, 10 * p.bin_ratio * p.bin_ratio) << out.reason;
  }
}

// The GPU busy share is a floor under the capacity, never a roof: a lightly busy GPU lets the
// estimate rise past the loads that held as the KV cache does (at most twice them), a GPU busy
// all the time lowers nothing (a batching server serves more once busy), and with no KV cache
// reported the KV ceiling stays 0.
TEST(CapacityLearner, GpuBusyShareLiftsTheEstimateButNeverLowersIt) {
  struct Case {
    double busy;
    double min_estimate, max_estimate;
  };
  const double load = 10;
  for (const Case& c : {Case{0.25, 1.5 * load, 2 * load * 1.08},
                        Case{1.0, load, load * 1.08 * 1.08}, Case{-1, load, load * 1.08 * 1.08}}) {
    SCOPED_TRACE(c.busy);
    CapacityParams p;
    PersistentState state;
    CapacityLearner l(p, state, "c.");
    CapacityState out;
    for (int i = 0; i < 60; ++i) {
      CapacitySample s;
      s.load = load;
      s.ttft_p99_s = 0.6;
      s.latency_p99_s = 6;
      if (c.busy >= 0) s.busy = c.busy;
      out = l.Observe(s, 15.0 * (i + 1));
    }
    EXPECT_EQ(out.ceiling, 0) << out.reason;
    if (c.busy > 0) {
      EXPECT_NEAR(out.lift, load * p.util_fill / c.busy, 0.5) << out.reason;
    }
    EXPECT_GE(out.estimate, c.min_estimate) << out.reason;
    EXPECT_LE(out.estimate, c.max_estimate + 1e-9) << out.reason;
  }
}

// A window's p99 over fewer requests than the SLO lets miss one of (100 for 99%) is its slowest
// request alone: a long answer breaks the latency bound at any load. Such a window counts by its
// share of the 100; one whose TTFT broke (queueing shows there first), or over enough requests,
// counts whole. Six windows at 2/s per replica, the rows differing in what broke and over how
// many requests.
TEST(CapacityLearner, OneLongAnswerIsNotTheLoad) {
  struct Row {
    const char* name;
    double ttft_s, latency_s, requests;
    bool counts;
  };
  const Row rows[] = {
      {"latency over 40 requests: one long answer", 0.6, 25, 40, false},
      {"latency over 400 requests", 0.6, 25, 400, true},
      {"TTFT over 40 requests", 2.5, 10, 40, true},
      {"request count unknown", 0.6, 25, 0, true},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    CapacityParams p;  // SLO 2 s / 20 s, 99%
    PersistentState state;
    CapacityLearner l(p, state, "c.");
    double t = 0;
    CapacityState out;
    for (int i = 0; i < 6; ++i) {
      t += 15;
      CapacitySample s;
      s.load = 2;
      s.ttft_p99_s = row.ttft_s;
      s.latency_p99_s = row.latency_s;
      s.requests = row.requests;
      out = l.Observe(s, t);
    }
    if (row.counts) {
      EXPECT_NEAR(out.broke_at, 2, 2 * (p.bin_ratio - 1)) << out.reason;
    } else {
      EXPECT_EQ(out.broke_at, 0) << out.reason;
    }
  }
}

}  // namespace
}  // namespace aiscale::decide::serving
