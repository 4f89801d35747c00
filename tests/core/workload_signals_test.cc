#include "core/workload_signals.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace aiscale {
namespace {

Observation Obs(const char* s, double v, double at_s) { return {s, "", v, AtSeconds(at_s), true}; }

TEST(WorkloadSignals, FiltersBadValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* name;
    std::vector<Observation> obs;
    SignalStatus status;
    double mean;
    int rejected;
  };
  const std::vector<Case> cases = {
      {"all good", {Obs("gpu_util", 50, 100), Obs("gpu_util", 70, 100)}, SignalStatus::kOk, 60, 0},
      {"nan dropped",
       {Obs("gpu_util", nan, 100), Obs("gpu_util", 70, 100)},
       SignalStatus::kOk,
       70,
       1},
      {"all invalid",
       {Obs("gpu_util", inf, 100), Obs("gpu_util", -1, 100)},
       SignalStatus::kInvalid,
       0,
       2},
      {"out of range", {Obs("gpu_util", 101, 100)}, SignalStatus::kInvalid, 0, 1},
      {"negative rate", {Obs("request_rate", -3, 100)}, SignalStatus::kInvalid, 0, 1},
      {"stale", {Obs("gpu_util", 50, 10)}, SignalStatus::kStale, 0, 1},
      {"empty", {}, SignalStatus::kMissing, 0, 0},
      {"custom signal may be negative", {Obs("my_signal", -5, 100)}, SignalStatus::kOk, -5, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    WorkloadSignals ws;
    const std::string name = c.obs.empty() ? "gpu_util" : c.obs[0].signal;
    ws.Ingest(name, c.obs, AtSeconds(100), Seconds(45));
    const auto& snap = ws.Get(name);
    EXPECT_EQ(snap.status, c.status);
    EXPECT_EQ(snap.rejected, c.rejected);
    if (c.status == SignalStatus::kOk) {
      EXPECT_DOUBLE_EQ(snap.mean, c.mean);
    } else {
      EXPECT_FALSE(snap.detail.empty());
    }
  }
}

TEST(WorkloadSignals, HistoryKeepsOnlyValidTicks) {
  WorkloadSignals ws;
  ws.Ingest("queue_len", {Obs("queue_len", 4, 1)}, AtSeconds(1), Seconds(45));
  ws.Ingest("queue_len", {Obs("queue_len", std::nan(""), 2)}, AtSeconds(2), Seconds(45));
  ws.Ingest("queue_len", {Obs("queue_len", 6, 3)}, AtSeconds(3), Seconds(45));
  EXPECT_EQ(ws.SumHistory("queue_len").size(), 2u);
  EXPECT_EQ(ws.Get("never").status, SignalStatus::kMissing);
  ws.MarkFetchFailed("queue_len", "timeout");
  EXPECT_EQ(ws.Get("queue_len").status, SignalStatus::kFetchFailed);
}

// A slot names one signal for good: ingesting by slot is ingesting by name, each signal keeps
// its own range, and a snapshot reference survives signals added after it.
TEST(WorkloadSignals, SlotsAreStableAndMatchLookupsByName) {
  WorkloadSignals ws;
  const size_t util = ws.Slot("gpu_util");
  const size_t mine = ws.Slot("my_signal");
  EXPECT_NE(util, mine);
  EXPECT_EQ(ws.Slot("gpu_util"), util);
  ws.Ingest(util, {Obs("gpu_util", 150, 10), Obs("gpu_util", 40, 10)}, AtSeconds(10), Seconds(45));
  ws.Ingest(mine, {Obs("my_signal", 150, 10)}, AtSeconds(10), Seconds(45));
  const SignalSnapshot& held = ws.Get("gpu_util");
  EXPECT_EQ(&held, &ws.Get(util));
  EXPECT_EQ(held.rejected, 1);  // gpu_util's 0-100 range, not my_signal's
  EXPECT_DOUBLE_EQ(held.sum, 40);
  EXPECT_DOUBLE_EQ(ws.Get(mine).sum, 150);
  for (int i = 0; i < 100; ++i) ws.Slot("extra_" + std::to_string(i));
  EXPECT_EQ(&held, &ws.Get("gpu_util"));
  EXPECT_DOUBLE_EQ(held.sum, 40);
  ws.MarkFetchFailed(mine, "refused");
  EXPECT_EQ(ws.Get("my_signal").status, SignalStatus::kFetchFailed);
  EXPECT_EQ(ws.Get("my_signal").detail, "refused");
  const std::vector<std::string> names = ws.Names();
  ASSERT_EQ(names.size(), 102u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

}  // namespace
}  // namespace aiscale
