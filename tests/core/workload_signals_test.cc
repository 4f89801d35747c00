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
      // Values kept, some dropped: partial, which vetoes a scale-down (issue 27 §6: a query
      // answering 0, NaN, NaN was "ok" and an External metric went 3 -> 1).
      {"nan dropped",
       {Obs("gpu_util", nan, 100), Obs("gpu_util", 70, 100)},
       SignalStatus::kPartial,
       70,
       1},
      {"stale dropped beside a fresh value",
       {Obs("gpu_util", 50, 10), Obs("gpu_util", 70, 100)},
       SignalStatus::kPartial,
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
    if (c.status == SignalStatus::kOk || c.status == SignalStatus::kPartial) {
      EXPECT_TRUE(snap.ok());
      EXPECT_EQ(snap.complete(), c.status == SignalStatus::kOk);
      EXPECT_DOUBLE_EQ(snap.mean, c.mean);
    }
    if (c.status != SignalStatus::kOk) {
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

Observation Pod(const char* signal, const char* pod, double v, double at_s) {
  return {signal, pod, v, AtSeconds(at_s), true};
}

ReplicaEndpoint Endpoint(const char* name, int port, bool ready = true) {
  return {name, "127.0.0.1", port, ready};
}

// Pods are the engine's replicas (issue 27 §6): after a Prometheus restart, series of replicas
// stopped minutes ago were counted as pods (ready_pods=7 with 1 replica); duplicates counted
// twice; a sample stamped centuries ahead counted as fresh.
TEST(WorkloadSignals, MatchesSeriesToTheEnginesReplicas) {
  struct Case {
    std::string name;
    std::vector<Observation> obs;
    std::vector<ReplicaEndpoint> replicas;  // empty: the engine does not say
    bool engine_says = true;
    SignalStatus status;
    int instances;
    double sum;
    int foreign;
    int duplicates;
    std::string detail_has;
  };
  const std::vector<Case> cases = {
      {"stopped replicas' series are foreign",
       {Pod("concurrency", "llm-0", 5, 100), Pod("concurrency", "llm-3", 9, 100),
        Pod("concurrency", "llm-4", 9, 100)},
       {Endpoint("llm-0", 8000)},
       true,
       SignalStatus::kOk,
       1,
       5,
       2,
       0,
       "ignored 2 foreign series (llm-3, llm-4"},
      {"matched by host:port (a Prometheus instance label)",
       {Pod("concurrency", "127.0.0.1:8000", 5, 100), Pod("concurrency", "127.0.0.1:8003", 9, 100)},
       {Endpoint("llm-0", 8000)},
       true,
       SignalStatus::kOk,
       1,
       5,
       1,
       0,
       "127.0.0.1:8003"},
      {"per-GPU series of a replica are its own",
       {Pod("gpu_util", "llm-0/gpu0", 50, 100), Pod("gpu_util", "llm-0/gpu1", 70, 100),
        Pod("gpu_util", "llm-9/gpu0", 90, 100)},
       {Endpoint("llm-0", 8000)},
       true,
       SignalStatus::kOk,
       2,
       120,
       1,
       0,
       "llm-9/gpu0"},
      {"a replica's GPU series repeated count once each, the newest sample",
       {Pod("gpu_util", "llm-0/gpu0", 50, 90), Pod("gpu_util", "llm-0/gpu1", 70, 100),
        Pod("gpu_util", "llm-1/gpu0", 10, 100), Pod("gpu_util", "llm-0/gpu0", 60, 100),
        Pod("gpu_util", "llm-0/gpu1", 20, 95)},
       {Endpoint("llm-0", 8000), Endpoint("llm-1", 8001)},
       true,
       SignalStatus::kOk,
       3,
       140,
       0,
       2,
       "duplicate"},
      {"a duplicate series counts once, the newest sample",
       {Pod("concurrency", "llm-0", 5, 90), Pod("concurrency", "llm-0", 7, 100)},
       {Endpoint("llm-0", 8000)},
       true,
       SignalStatus::kOk,
       1,
       7,
       0,
       1,
       "duplicate"},
      {"duplicates count once with no engine list too",
       {Pod("concurrency", "a", 5, 100), Pod("concurrency", "a", 5, 99),
        Pod("concurrency", "b", 1, 100)},
       {},
       false,
       SignalStatus::kOk,
       2,
       6,
       0,
       1,
       "duplicate"},
      {"a stale old series beside the live one is a duplicate, not missing data",
       {Pod("concurrency", "llm-0", 3, 10), Pod("concurrency", "llm-0", 5, 100)},
       {Endpoint("llm-0", 8000)},
       true,
       SignalStatus::kOk,
       1,
       5,
       0,
       1,
       "duplicate"},
      {"a ready replica without a value makes the signal partial",
       {Pod("concurrency", "llm-0", 5, 100)},
       {Endpoint("llm-0", 8000), Endpoint("llm-1", 8001)},
       true,
       SignalStatus::kPartial,
       1,
       5,
       0,
       0,
       "1 ready replica(s) without a value (llm-1)"},
      {"an unready replica need not report",
       {Pod("concurrency", "llm-0", 5, 100)},
       {Endpoint("llm-0", 8000), Endpoint("llm-1", 8001, false)},
       true,
       SignalStatus::kOk,
       1,
       5,
       0,
       0,
       ""},
      {"a replica's stale sample is missing data",
       {Pod("concurrency", "llm-0", 5, 100), Pod("concurrency", "llm-1", 5, 10)},
       {Endpoint("llm-0", 8000), Endpoint("llm-1", 8001)},
       true,
       SignalStatus::kPartial,
       1,
       5,
       0,
       0,
       "older than 45 s"},
      {"only foreign series: missing",
       {Pod("concurrency", "llm-3", 9, 100),
        [] {
          Observation o = Pod("concurrency", "llm-4", 9, 100);
          o.per_replica = true;  // a pod label: it names a replica, just not a current one
          return o;
        }()},
       {Endpoint("llm-0", 8000, false)},
       true,
       SignalStatus::kMissing,
       0,
       0,
       2,
       0,
       "no series of the engine's replicas"},
      {"series that name no replica are the workload's own (a load balancer)",
       {Pod("request_rate", "10.0.0.5:9000", 40, 100)},
       {Endpoint("llm-0", 8000)},
       true,
       SignalStatus::kOk,
       1,
       40,
       0,
       0,
       ""},
      {"a timestamp centuries ahead is invalid, not fresh",
       {{"concurrency", "llm-0", 5, TimePoint::max(), true}},
       {Endpoint("llm-0", 8000)},
       true,
       SignalStatus::kInvalid,
       0,
       0,
       0,
       0,
       "stamped in the future"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ReplicaSet replicas;
    replicas.Assign(c.replicas);
    WorkloadSignals ws;
    const std::string signal = c.obs[0].signal;
    ws.Ingest(signal, c.obs, AtSeconds(100), Seconds(45), c.engine_says ? &replicas : nullptr);
    const SignalSnapshot& snap = ws.Get(signal);
    EXPECT_EQ(snap.status, c.status) << snap.detail;
    EXPECT_EQ(static_cast<int>(snap.instances.size()), c.instances) << snap.detail;
    EXPECT_DOUBLE_EQ(snap.sum, c.sum);
    EXPECT_EQ(snap.foreign, c.foreign);
    EXPECT_EQ(snap.duplicates, c.duplicates);
    EXPECT_NE(snap.detail.find(c.detail_has), std::string::npos) << snap.detail;
  }
}

// A partial reading (replicas silent) reads low; in the history it stands no lower than the
// last point, so a window over it cannot scale down once data is complete again (KPA went
// 4 -> 3 after two ticks with 2 of 4 replicas answering). A partial reading above the last
// point (load rising on the replicas that answer) is kept as read.
TEST(WorkloadSignals, APartialReadingLowersNoHistory) {
  WorkloadSignals ws;
  ReplicaSet rs;
  rs.Assign(
      {Endpoint("r0", 9000), Endpoint("r1", 9001), Endpoint("r2", 9002), Endpoint("r3", 9003)});
  auto ingest = [&](double t, int answering, double each) {
    std::vector<Observation> obs;
    const char* names[] = {"r0", "r1", "r2", "r3"};
    for (int i = 0; i < answering; ++i) obs.push_back(Pod("concurrency", names[i], each, t));
    ws.Ingest("concurrency", obs, AtSeconds(t), Seconds(45), &rs);
    return ws.Get("concurrency");
  };
  EXPECT_TRUE(ingest(15, 4, 9.5).complete());
  const SignalSnapshot partial = ingest(30, 2, 9.5);
  EXPECT_EQ(partial.status, SignalStatus::kPartial);
  EXPECT_DOUBLE_EQ(partial.sum, 19);  // the snapshot says what was read
  EXPECT_DOUBLE_EQ(ws.SumHistory("concurrency").Latest()->value, 38);
  EXPECT_DOUBLE_EQ(ws.MeanHistory("concurrency").Latest()->value, 9.5);
  ingest(45, 2, 30);  // rising: 60 over two replicas
  EXPECT_DOUBLE_EQ(ws.SumHistory("concurrency").Latest()->value, 60);
  EXPECT_DOUBLE_EQ(ws.MeanHistory("concurrency").Latest()->value, 30);
  ingest(60, 4, 2);  // complete again: as read
  EXPECT_DOUBLE_EQ(ws.SumHistory("concurrency").Latest()->value, 8);
}

// Many series (a scrape of thousands of pods): duplicates found by hash, same answer.
TEST(WorkloadSignals, ManyInstancesDeduplicateLikeFew) {
  std::vector<Observation> obs;
  for (int i = 0; i < 1000; ++i) {
    obs.push_back({"queue_len", "pod-" + std::to_string(i % 400), 1.0 * (i / 400),
                   AtSeconds(100 - 2 + i / 400), true});
  }
  // Without the engine's list (by name, hashed past a few) and with it (per replica).
  std::vector<ReplicaEndpoint> endpoints;
  for (int i = 0; i < 400; ++i)
    endpoints.push_back({"pod-" + std::to_string(i), "10.0.0.1", 8000 + i, true});
  ReplicaSet replicas;
  replicas.Assign(endpoints);
  for (const ReplicaSet* engine : std::vector<const ReplicaSet*>{nullptr, &replicas}) {
    SCOPED_TRACE(engine ? "engine's replicas" : "no engine list");
    WorkloadSignals ws;
    ws.Ingest("queue_len", obs, AtSeconds(100), Seconds(45), engine);
    const SignalSnapshot& snap = ws.Get("queue_len");
    EXPECT_EQ(snap.instances.size(), 400u);
    EXPECT_EQ(snap.duplicates, 600);
    EXPECT_EQ(snap.status, SignalStatus::kOk) << snap.detail;
    // The newest sample of each: the third round (value 2) for pods 0..199, else the second.
    EXPECT_DOUBLE_EQ(snap.sum, 200 * 2.0 + 200 * 1.0);
  }
}

// The same series as last time skip the search for duplicates; any change brings it back.
TEST(WorkloadSignals, DuplicatesAreFoundOnEveryIngest) {
  struct Step {
    std::vector<const char*> pods;
    int duplicates;
  };
  const std::vector<Step> steps = {
      {{"a", "b"}, 0}, {{"a", "b"}, 0}, {{"a", "a"}, 1}, {{"a", "b", "a"}, 1},
      {{"b", "a"}, 0}, {{"b", "a"}, 0}, {{"b", "b"}, 1}, {{"b", "b"}, 1},
  };
  WorkloadSignals ws;
  for (size_t t = 0; t < steps.size(); ++t) {
    SCOPED_TRACE(t);
    std::vector<Observation> obs;
    for (const char* pod : steps[t].pods) obs.push_back(Pod("queue_len", pod, 1, 100));
    ws.Ingest("queue_len", obs, AtSeconds(100), Seconds(45));
    const SignalSnapshot& snap = ws.Get("queue_len");
    EXPECT_EQ(snap.duplicates, steps[t].duplicates);
    EXPECT_EQ(snap.instances.size(), steps[t].pods.size() - steps[t].duplicates);
  }
}

// Finite values past the double range's half: the sum saturates, never infinity.
TEST(WorkloadSignals, SumSaturatesAtTheLargestFiniteDouble) {
  WorkloadSignals ws;
  const double big = std::numeric_limits<double>::max();
  ws.Ingest("request_rate",
            {Pod("request_rate", "a", big, 100), Pod("request_rate", "b", big, 100)},
            AtSeconds(100), Seconds(45));
  EXPECT_TRUE(std::isfinite(ws.Get("request_rate").sum));
  EXPECT_EQ(ws.Get("request_rate").sum, big);
}

}  // namespace
}  // namespace aiscale
