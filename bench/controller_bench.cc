// One Controller::Tick() over 10,000 workloads on SimClock: the issue-2 target is <= 100 ms
// per tick on one core. Source, actuator and policy are in-process and cheap, so the time
// measured is the Controller's own (fetch bookkeeping, filtering, histories, Decision
// building, and with a store, persisting).
//
//   ./build/controller_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>

#include <unistd.h>

#include "control/controller.h"
#include "decide/policies/static_policy.h"
#include "sim/event_queue.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace aiscale {
namespace {

constexpr int kWorkloads = 10000;
constexpr int kInstances = 4;  // per signal, e.g. GPUs or pods
const std::vector<std::string> kSignals = {"gpu_util", "queue_len", "request_rate"};

// Every workload's signals, stamped at fetch time; values vary a little per tick so the
// histories are not constant.
class BenchSource final : public MetricSource {
 public:
  std::string_view Name() const override { return "bench"; }
  Result<std::vector<Observation>> Fetch(const MetricQuery& q, TimePoint now) override {
    std::vector<Observation> out;
    out.reserve(kInstances);
    const double base = 40 + static_cast<double>((now.time_since_epoch().count() / 1000) % 20);
    for (int i = 0; i < kInstances; ++i) {
      out.push_back({q.signal, kInstanceNames[i], base + i, now, true});
    }
    return out;
  }

 private:
  static constexpr const char* kInstanceNames[kInstances] = {"gpu0", "gpu1", "gpu2", "gpu3"};
};

class BenchActuator final : public Actuator {
 public:
  std::string_view Name() const override { return "bench"; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override { return state_[ref.name]; }
  Status Apply(const WorkloadRef& ref, int desired) override {
    auto& s = state_[ref.name];
    s.current = s.ready = desired;
    return Status::Ok();
  }

 private:
  std::unordered_map<std::string, ScaleState> state_;
};

// desired = ceil(current * mean / target), the shape of HPA's ratio rule.
class RatioPolicy final : public Policy {
 public:
  std::string_view Name() const override { return "ratio"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override {
    (void)state;
    const SignalSnapshot& s = in.signals.Get("gpu_util");
    if (!s.ok()) return {in.current, false, "no_data", "gpu_util " + s.detail, {}};
    const int desired = static_cast<int>(std::ceil(in.current * s.mean / 50.0));
    return {desired, true, "ratio", "", {{"ratio", s.mean / 50.0}}};
  }
  std::vector<std::string> Signals() const override { return {"gpu_util"}; }
};

enum class PolicyKind { kRatio, kStatic };
enum class StoreKind { kNone, kMemory, kSqlite, kSqliteSynced };

void RunTicks(benchmark::State& state, PolicyKind kind, StoreKind store_kind) {
  sim::SimClock clock(AtSeconds(0));
  BenchSource source;
  BenchActuator actuator;
  store::MemoryStore memory(store::StoreOptions{16, false});
  std::unique_ptr<store::SqliteStore> sqlite;
  const std::string db = std::filesystem::temp_directory_path() /
                         ("aiscale-bench-" + std::to_string(::getpid()) + ".db");
  if (store_kind == StoreKind::kSqlite || store_kind == StoreKind::kSqliteSynced) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
    auto opened = store::SqliteStore::Open(
        db, store::StoreOptions{16, store_kind == StoreKind::kSqliteSynced});
    if (!opened.ok()) {
      state.SkipWithError(opened.status().message().c_str());
      return;
    }
    sqlite = std::move(*opened);
  }
  Store* store = store_kind == StoreKind::kMemory ? static_cast<Store*>(&memory) : sqlite.get();
  control::Controller ctl(clock, store);
  for (int i = 0; i < kWorkloads; ++i) {
    control::WorkloadBinding b;
    b.ref = {"Deployment", "bench", "w" + std::to_string(i)};
    if (kind == PolicyKind::kRatio) {
      b.policy = std::make_unique<RatioPolicy>();
    } else {
      b.policy = std::make_unique<decide::StaticPolicy>(2 + i % 3);
    }
    b.actuator = &actuator;
    b.history_capacity = 256;
    for (const auto& s : kSignals) b.signals.push_back({s, "", &source});
    if (!ctl.Add(std::move(b)).ok()) {
      state.SkipWithError("Add failed");
      return;
    }
  }
  // The first tick creates every signal's histories; what is measured is the steady state.
  clock.Advance(Seconds(15));
  ctl.Tick();
  size_t decisions = 0;
  for (auto _ : state) {
    clock.Advance(Seconds(15));
    auto ds = ctl.Tick();
    decisions += ds.size();
    benchmark::DoNotOptimize(ds.data());
  }
  state.counters["workloads"] = kWorkloads;
  state.counters["decisions_per_s"] =
      benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kIsRate);
}

void BM_TickRatio(benchmark::State& s) { RunTicks(s, PolicyKind::kRatio, StoreKind::kNone); }
void BM_TickRatioMemoryStore(benchmark::State& s) {
  RunTicks(s, PolicyKind::kRatio, StoreKind::kMemory);
}
void BM_TickStatic(benchmark::State& s) { RunTicks(s, PolicyKind::kStatic, StoreKind::kNone); }
void BM_TickStaticMemoryStore(benchmark::State& s) {
  RunTicks(s, PolicyKind::kStatic, StoreKind::kMemory);
}
// The durable store as a deployment runs it: WAL, synchronous=NORMAL (and FULL: fsync per
// commit), keeping the last 16 decisions per workload, a temp file on this machine's disk.
void BM_TickStaticSqliteStore(benchmark::State& s) {
  RunTicks(s, PolicyKind::kStatic, StoreKind::kSqlite);
}
void BM_TickStaticSqliteStoreSynced(benchmark::State& s) {
  RunTicks(s, PolicyKind::kStatic, StoreKind::kSqliteSynced);
}

BENCHMARK(BM_TickRatio)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TickRatioMemoryStore)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TickStatic)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TickStaticMemoryStore)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TickStaticSqliteStore)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TickStaticSqliteStoreSynced)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace aiscale

BENCHMARK_MAIN();
