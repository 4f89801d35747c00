// Store benchmarks (issue 11 §4): what persisting every tick costs a controller over 10,000
// workloads, on SqliteStore in WAL mode with synchronous=NORMAL, as a deployment runs it:
// changes and 5-minute heartbeats only (store.heartbeat), 7 days kept.
//
//   BM_SqliteTick/10000      time of one tick's WriteBatch (a decision and a policy state per
//                            workload), the controller's per-tick write path, steady workloads:
//                            the decisions are unchanged (skipped but for heartbeats), the
//                            states change every tick.
//   BM_SqliteGrowthPerDay    two simulated hours of 15 s ticks over 10,000 steady workloads (the
//                            same decision every tick but for jittering signal values); the
//                            growth of the second hour, extrapolated to a day.
//
//   ./build/store_bench --benchmark_filter=Sqlite
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/decision.h"
#include "core/state.h"
#include "core/store.h"
#include "core/time.h"
#include "store/sqlite_store.h"

namespace aiscale {
namespace {

constexpr double kPeriodS = 15;

std::string TempDb(const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("aiscale_store_bench_" + std::to_string(::getpid()) + "_" + name + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  return path.string();
}

// A steady workload's tick as the controller records it: two ok signals, a valid target-
// tracking recommendation that keeps the size, no action.
Decision SteadyDecision(int i) {
  Decision d;
  d.workload = "inference/llm-" + std::to_string(i);
  d.policy = "target-tracking";
  d.current = 4;
  d.ready = 4;
  d.engine_detail = "4 ready";
  d.inputs = {{"queue_depth", SignalStatus::kOk, 3.0, 12.0, 4, ""},
              {"gpu_util", SignalStatus::kOk, 0.61, 2.44, 4, ""}};
  d.recommendation.desired = 4;
  d.recommendation.valid = true;
  d.recommendation.rule = "target";
  d.recommendation.reason = "queue_depth 3.00 per replica against target 3 over 4 replicas: 4";
  d.recommendation.facts = {{"ratio", 1.0}, {"target", 3.0}};
  d.stabilized = 4;
  d.stabilize_reason = "no change";
  d.constrained = 4;
  d.constrain_reason = "within [1, 16]";
  return d;
}

// Moves every decision to tick `tick` with slightly different signal values (steady load
// still jitters), as the next tick would record it.
void Advance(std::vector<Decision>& ds, std::vector<PersistentState>& states, int tick) {
  const TimePoint at(Seconds(kPeriodS * tick));
  for (size_t i = 0; i < ds.size(); ++i) {
    Decision& d = ds[i];
    d.at = at;
    d.wall = WallTime(Seconds(1.7e9 + kPeriodS * tick));
    const double jitter = 0.01 * static_cast<double>((i * 7 + static_cast<size_t>(tick)) % 11);
    d.inputs[0].value = 3.0 + jitter;
    d.inputs[0].sum = 4 * d.inputs[0].value;
    d.inputs[1].value = 0.61 + jitter;
    d.recommendation.facts[0].second = d.inputs[0].value / 3.0;
    states[i].Set("last_metric", d.inputs[0].value);
  }
}

struct Fleet {
  std::vector<Decision> decisions;
  std::vector<PersistentState> states;
  std::vector<std::string> keys;
  std::vector<StoreWrite> writes;

  explicit Fleet(int n) {
    for (int i = 0; i < n; ++i) {
      decisions.push_back(SteadyDecision(i));
      states.emplace_back();
      states.back().values["window"] = {3.0, 3.01, 2.99, 3.02};
      keys.push_back(decisions.back().workload + "/policy");
    }
    for (int i = 0; i < n; ++i) {
      writes.push_back(StoreWrite{&decisions[i], {{keys[i], &states[i]}}});
    }
  }
};

store::StoreOptions Options() {
  store::StoreOptions o;
  o.sync_every_commit = false;  // synchronous=NORMAL
  o.heartbeat = Seconds(300);
  o.retention = Seconds(7 * 86400);
  return o;
}

void BM_SqliteTick(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string path = TempDb("tick");
  auto store = store::SqliteStore::Open(path, Options());
  if (!store.ok()) {
    state.SkipWithError(store.status().message().c_str());
    return;
  }
  Fleet fleet(n);
  int tick = 0;
  for (auto _ : state) {
    Advance(fleet.decisions, fleet.states, ++tick);
    const Status st = (*store)->WriteBatch(fleet.writes);
    if (!st.ok()) state.SkipWithError(st.message().c_str());
  }
  state.counters["workloads"] = n;
  state.counters["us_per_workload"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}
BENCHMARK(BM_SqliteTick)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_SqliteGrowthPerDay(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  constexpr int kTicksPerHour = static_cast<int>(3600 / kPeriodS);
  const std::string path = TempDb("growth");
  double bytes = 0;
  for (auto _ : state) {
    {
      auto store = store::SqliteStore::Open(path, Options());
      if (!store.ok()) {
        state.SkipWithError(store.status().message().c_str());
        return;
      }
      Fleet fleet(n);
      double first_hour = 0;
      for (int tick = 1; tick <= 2 * kTicksPerHour; ++tick) {
        Advance(fleet.decisions, fleet.states, tick);
        const Status st = (*store)->WriteBatch(fleet.writes);
        if (!st.ok()) {
          state.SkipWithError(st.message().c_str());
          return;
        }
        if (tick == kTicksPerHour) first_hour = static_cast<double>((*store)->SizeBytes().value());
      }
      // The first hour holds every workload's first decision; the second is the steady rate.
      bytes = static_cast<double>((*store)->SizeBytes().value()) - first_hour;
    }
  }
  state.counters["workloads"] = n;
  state.counters["MB_per_hour"] = bytes / 1e6;
  state.counters["GB_per_day"] = bytes * 24 / 1e9;
  // A steady workload stores one heartbeat per 5 minutes: 12 rows an hour.
  state.counters["bytes_per_stored_decision"] = bytes / (static_cast<double>(n) * 12);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}
BENCHMARK(BM_SqliteGrowthPerDay)->Arg(10000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace aiscale
BENCHMARK_MAIN();
