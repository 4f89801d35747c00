// One Controller::Tick() over 10,000 workloads on SimClock: the issue-2 target is <= 100 ms
// per tick on one core. Source, actuator and policy are in-process and cheap, so the time
// measured is the Controller's own (fetch bookkeeping, filtering, histories, Decision
// building, and with a store, persisting).
//
// BM_TickPolicyMix (issue 7): the same target with the real policy mix, a quarter each of hpa
// (with an autoscaling/v2 behavior), kpa, predictive and training, built from YAML through
// the registry and BuildPipeline and bound by Assemble, as `aiscale run` builds them. Their
// signals come from an in-memory source whose per-pod values follow each workload's demand
// curve and replica count (deterministic, different every tick). The world is warmed up for
// 30 simulated minutes first (predictive's forecast is trusted, training has fitted its
// throughput), shared by the repetitions. Each iteration is Collect() then Tick(), as the
// daemon runs them; the time is Tick's, collect_ms is Collect's (inline executor).
//
//   ./build/controller_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   ./build/controller_bench --benchmark_filter=PolicyMix --benchmark_repetitions=5
// /200 is for instruction counts (a few minutes under callgrind, Tick only):
//   valgrind --tool=callgrind --toggle-collect='aiscale::control::Controller::Tick()'
//     ./build/controller_bench --benchmark_filter='BM_TickPolicyMix/200' --benchmark_min_time=0.01
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>

#include <unistd.h>

#include "control/assembler.h"
#include "control/controller.h"
#include "control/live_board.h"
#include "core/allocator_tuning.h"
#include "core/config/config_node.h"
#include "core/telemetry.h"
#include "decide/pipeline.h"
#include "decide/policies/static_policy.h"
#include "decide/policy_registry.h"
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

// ---- The policy mix (issue 7) ----

constexpr int kMaxPods = 64;

// A deterministic value in [-1, 1) for (a, b, c): the bench's "noise".
double Jitter(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e5cbULL) * 0xbf58476d1ce4e5b9ULL ^
               (c + 1) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return static_cast<double>(x >> 11) / static_cast<double>(1ULL << 52) - 1.0;
}

// Replica counts by workload index; the source reads them so per-pod values follow the scale.
class MixActuator final : public Actuator {
 public:
  explicit MixActuator(std::vector<int> initial) : scale_(std::move(initial)) {}
  std::string_view Name() const override { return "bench"; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override {
    ScaleState s;
    s.current = s.ready = scale_[Index(ref)];
    return s;
  }
  Status Apply(const WorkloadRef& ref, int desired) override {
    scale_[Index(ref)] = desired;
    return Status::Ok();
  }
  int replicas(size_t i) const { return scale_[i]; }
  // Workloads are named w<index>.
  static size_t Index(const WorkloadRef& ref) {
    return static_cast<size_t>(std::strtoul(ref.name.c_str() + 1, nullptr, 10));
  }

 private:
  std::vector<int> scale_;
};

// Serving demand follows an hourly wave per workload (own amplitude, phase and size) with
// per-tick noise; training jobs report throughput that grows sub-linearly with size, a
// remaining sample count that shrinks, and a short eval phase every 10 minutes.
class MixSource final : public MetricSource {
 public:
  explicit MixSource(const MixActuator& actuator) : actuator_(actuator) {
    // Names as a Deployment's pods have them (<name>-<replicaset hash>-<5 chars>): longer than
    // a short string, as in a cluster, so copying one costs an allocation.
    for (int p = 0; p < kMaxPods; ++p) {
      pods_.push_back("llm-serving-7d9f8b6c5-" + std::string(1, static_cast<char>('a' + p % 26)) +
                      std::to_string(10000 + p));
    }
  }
  std::string_view Name() const override { return "bench-mix"; }
  FetchResult Fetch(const MetricQuery& q, TimePoint now) override {
    const size_t i = MixActuator::Index(q.workload);
    const int n = std::clamp(actuator_.replicas(i), 0, kMaxPods);
    const double t = SinceEpochSeconds(now);
    const uint64_t tick = static_cast<uint64_t>(t / 15);
    std::vector<Observation> out;
    if (i % 4 == 3) {
      Training(q.signal, i, n, t, tick, now, out);
      return out;
    }
    const double base = 20 + static_cast<double>(i % 97) * 2;  // concurrent requests
    const double wave = 1 + 0.4 * std::sin(2 * M_PI * (t / 3600 + static_cast<double>(i) / 37));
    const double demand = base * wave * (1 + 0.05 * Jitter(i, tick, 0));
    out.reserve(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) {
      const double share = demand / n * (1 + 0.1 * Jitter(i, tick, static_cast<uint64_t>(p) + 1));
      double v = share;                                                        // concurrency
      if (q.signal == "kv_cache_usage") v = std::min(0.95, 0.6 * share / 24);  // 0-1
      if (q.signal == "request_rate") v = share / 8;                           // ~8 s per request
      out.push_back({q.signal, pods_[static_cast<size_t>(p)], v, now, true});
    }
    return out;
  }

 private:
  void Training(const std::string& signal, size_t i, int n, double t, uint64_t tick, TimePoint now,
                std::vector<Observation>& out) const {
    const bool eval = tick % 40 >= 38;
    const double rate =
        eval ? 0 : 600 * std::pow(std::max(n, 1), 0.9) * (1 + 0.02 * Jitter(i, tick, 0));
    if (signal == "samples_per_s") {
      out.push_back({signal, "", rate, now, true});
    } else if (signal == "samples_remaining") {
      out.push_back({signal, "", std::max(0.0, 5e9 - 6000 * t), now, true});
    } else if (signal == "phase") {
      out.push_back({signal, "", eval ? 2.0 : 1.0, now, true});
    } else if (signal == "epoch") {
      out.push_back({signal, "", std::floor(t / 3600), now, true});
    } else if (signal == "gpu_util") {
      for (int p = 0; p < n; ++p) {
        const double u = (eval ? 40 : 88) + 5 * Jitter(i, tick, static_cast<uint64_t>(p) + 1);
        out.push_back({signal, pods_[static_cast<size_t>(p)], u, now, true});
      }
    }
  }

  const MixActuator& actuator_;
  std::vector<std::string> pods_;
};

// One workload entry of a controller config per policy kind (names are set per workload).
const char* const kMixYaml[4] = {
    R"(name: hpa
kind: InferenceService
min_replicas: 1
max_replicas: 32
behavior:
  scaleUp:
    stabilizationWindowSeconds: 0
    policies: [{type: Pods, value: 4, periodSeconds: 60}]
  scaleDown:
    stabilizationWindowSeconds: 300
    policies: [{type: Percent, value: 50, periodSeconds: 60}]
policy:
  name: hpa
  tolerance: 0.1
  metrics:
    - {signal: concurrency, type: Pods, target: {type: AverageValue, value: 24}}
    - {signal: kv_cache_usage, type: Pods, target: {type: AverageValue, value: 0.8}}
)",
    R"(name: kpa
kind: InferenceService
min_replicas: 1
max_replicas: 64
policy: {name: kpa, signal: concurrency, target: 16, stable_window: 60s}
)",
    R"(name: predictive
kind: InferenceService
min_replicas: 1
max_replicas: 64
cold_start: 2m
policy:
  name: predictive
  signal: request_rate
  capacity_per_replica: 2.0
  target_utilization: 0.8
  min_errors: 10
)",
    R"(name: training
kind: PyTorchJob
min_replicas: 2
max_replicas: 16
cold_start: 3m
policy: {name: training, rescales_per_hour: 1, rescale_burst: 2, min_dwell: 15m}
)"};

// The initial size of workload i: serving sized near its mean demand, training at 8.
int InitialReplicas(int i) {
  if (i % 4 == 3) return 8;
  return std::max(1, (20 + (i % 97) * 2) / 16);
}

// Forwards to a Store and times its WriteBatch (the tick's one commit).
class TimedStore final : public Store {
 public:
  explicit TimedStore(Store& inner) : inner_(inner) {}
  Status Append(const Decision& d) override { return inner_.Append(d); }
  Status WriteBatch(const std::vector<StoreWrite>& writes) override {
    const auto t0 = std::chrono::steady_clock::now();
    Status st = inner_.WriteBatch(writes);
    write_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return st;
  }
  Result<std::vector<Decision>> Recent(const std::string& w, size_t n) override {
    return inner_.Recent(w, n);
  }
  Result<PersistentState> LoadState(const std::string& key) override {
    return inner_.LoadState(key);
  }
  Status SaveState(const std::string& key, const PersistentState& s) override {
    return inner_.SaveState(key, s);
  }
  double write_s = 0;

 private:
  Store& inner_;
};

struct MixWorld {
  ~MixWorld() {
    ctl.reset();
    timed.reset();
    sqlite.reset();
    if (!db.empty()) {
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
    }
  }
  sim::SimClock clock{AtSeconds(1'700'000'000)};
  std::string db;  // with a store: a temp file, removed with the world
  std::unique_ptr<store::SqliteStore> sqlite;
  std::unique_ptr<TimedStore> timed;
  double growth_bytes_per_s = 0;  // database growth over the second half of the warm-up
  std::unique_ptr<MixActuator> actuator;
  std::unique_ptr<MixSource> source;
  std::unique_ptr<Telemetry> telemetry;
  std::unique_ptr<control::LiveBoard> board;
  std::unique_ptr<control::Controller> ctl;
};

Status AddMixWorkloads(MixWorld& w, int count) {
  auto registry = decide::PolicyRegistry::Default();
  if (!registry.ok()) return registry.status();
  config::ConfigErrors errors;
  std::vector<config::ConfigNode> nodes;
  for (const char* yaml : kMixYaml) nodes.push_back(config::ParseConfig(yaml, "mix.yaml", errors));
  if (!errors.empty()) return errors.ToStatus();
  control::SourceLookup lookup;
  lookup.fallback = w.source.get();
  for (int i = 0; i < count; ++i) {
    // One pipeline per workload, as the daemon builds them from its config.
    const config::ConfigNode& n = nodes[static_cast<size_t>(i % 4)];
    auto pipeline = decide::BuildPipeline(*registry, n, n.Child("policy"), 15,
                                          n.DurationSeconds("cold_start", 0));
    if (!pipeline.ok()) return pipeline.status();
    WorkloadSpec spec = decide::ReadWorkloadFields(n, 15);
    spec.ref.name = "w" + std::to_string(i);
    spec.ref.namespace_ = "bench";
    auto b = control::Assemble(spec, *pipeline, lookup, w.actuator.get());
    if (!b.ok()) return b.status();
    RETURN_IF_ERROR(w.ctl->Add(std::move(b).value()));
  }
  return errors.empty() ? Status::Ok() : errors.ToStatus();
}

// 30 simulated minutes of 15 s ticks: predictive has scored more than min_errors forecasts,
// training has fitted its throughput at its size and seen three eval phases.
constexpr int kWarmupTicks = 120;

// Built once per (count, daemon-like) and shared by every repetition, so the warm-up is
// paid once.
// The store a deployment runs (issue 11): SQLite in WAL mode with synchronous=NORMAL, changes
// and 5-minute heartbeats only, 7 days kept, a file in the temp directory.
Status OpenMixStore(MixWorld& w, int state_every_ticks) {
  w.db = (std::filesystem::temp_directory_path() /
          ("aiscale-mix-" + std::to_string(::getpid()) + ".db"))
             .string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(w.db + suffix);
  store::StoreOptions o;
  o.sync_every_commit = false;
  o.heartbeat = Seconds(300);
  o.retention = Seconds(7 * 86400);
  o.state_every_ticks = state_every_ticks;
  const char* inline_checkpoint = std::getenv("AISCALE_INLINE_CHECKPOINT");
  o.checkpoint_in_background = !(inline_checkpoint && std::string(inline_checkpoint) == "1");
  if (const char* page_size = std::getenv("AISCALE_STORE_PAGE_SIZE")) {
    o.page_size = std::atoi(page_size);
  }
  ASSIGN_OR_RETURN(w.sqlite, store::SqliteStore::Open(w.db, o));
  w.timed = std::make_unique<TimedStore>(*w.sqlite);
  return Status::Ok();
}

int64_t DbBytes(MixWorld& w) {
  auto n = w.sqlite ? w.sqlite->SizeBytes() : Result<int64_t>(int64_t{0});
  return n.ok() ? *n : 0;
}

// store_every: 0 runs without a store; otherwise SqliteStore with that state_every_ticks.
MixWorld* MixWorldFor(int count, bool daemon_like, int store_every, std::string& error) {
  // One world at a time: a benchmark's repetitions run back to back, and a 10,000-workload
  // world is large (232 MB peak RSS for BM_TickPolicyMix/10000; histories grow as they fill).
  static std::tuple<int, bool, int> key;
  static std::unique_ptr<MixWorld> slot;
  if (slot && key == std::make_tuple(count, daemon_like, store_every)) return slot.get();
  slot.reset();
  key = {count, daemon_like, store_every};
  auto w = std::make_unique<MixWorld>();
  if (store_every > 0) {
    if (Status st = OpenMixStore(*w, store_every); !st.ok()) {
      error = st.message();
      return nullptr;
    }
  }
  std::vector<int> initial;
  for (int i = 0; i < count; ++i) initial.push_back(InitialReplicas(i));
  w->actuator = std::make_unique<MixActuator>(std::move(initial));
  w->source = std::make_unique<MixSource>(*w->actuator);
  control::ControllerOptions o;
  o.collect_interval = Seconds(15);
  if (daemon_like) {
    w->telemetry = std::make_unique<Telemetry>();
    w->board = std::make_unique<control::LiveBoard>();
    o.telemetry = w->telemetry.get();
    o.board = w->board.get();
  }
  w->ctl = std::make_unique<control::Controller>(w->clock, w->timed.get(), o);
  if (Status st = AddMixWorkloads(*w, count); !st.ok()) {
    error = st.message();
    return nullptr;
  }
  int64_t half_bytes = 0;
  for (int k = 0; k < kWarmupTicks; ++k) {
    if (k == kWarmupTicks / 2) half_bytes = DbBytes(*w);
    w->clock.Advance(Seconds(15));
    w->ctl->Collect();
    w->ctl->Tick();
  }
  // Past the first heartbeat period, so the first tick's full write is not counted.
  w->growth_bytes_per_s =
      static_cast<double>(DbBytes(*w) - half_bytes) / (15.0 * (kWarmupTicks - kWarmupTicks / 2));
  slot = std::move(w);
  return slot.get();
}

void RunMix(benchmark::State& state, bool daemon_like, int store_every = 0) {
  const int count = static_cast<int>(state.range(0));
  std::string error;
  MixWorld* w = MixWorldFor(count, daemon_like, store_every, error);
  if (!w) {
    state.SkipWithError(error.c_str());
    return;
  }
  double collect_s = 0;
  const double write_before = w->timed ? w->timed->write_s : 0;
  const auto stats_before = w->sqlite ? w->sqlite->Stats() : store::SqliteStore::WriteStats{};
  size_t decisions = 0, valid = 0, scaled = 0;
  std::vector<double> tick_s;  // each tick alone, for the median the target is stated in
  for (auto _ : state) {
    state.PauseTiming();
    w->clock.Advance(Seconds(15));
    const auto c0 = std::chrono::steady_clock::now();
    w->ctl->Collect();
    collect_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    state.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    auto ds = w->ctl->Tick();
    const auto t1 = std::chrono::steady_clock::now();
    state.PauseTiming();
    for (const Decision& d : ds) {
      valid += d.recommendation.valid ? 1 : 0;
      scaled += d.action == Action::kScaled ? 1 : 0;
    }
    decisions += ds.size();
    state.ResumeTiming();
    // Freeing the tick's decisions is the caller's part of the tick (the daemon frees them too).
    const auto t2 = std::chrono::steady_clock::now();
    std::vector<Decision>().swap(ds);
    tick_s.push_back(
        std::chrono::duration<double>(t1 - t0 + std::chrono::steady_clock::now() - t2).count());
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["workloads"] = count;
  state.counters["collect_ms"] = 1000 * collect_s / iters;
  if (!tick_s.empty()) {
    std::nth_element(tick_s.begin(), tick_s.begin() + tick_s.size() / 2, tick_s.end());
    state.counters["tick_p50_ms"] = 1000 * tick_s[tick_s.size() / 2];
  }
  state.counters["valid_frac"] = decisions ? static_cast<double>(valid) / decisions : 0;
  state.counters["scaled_per_tick"] = static_cast<double>(scaled) / iters;
  if (w->timed) {
    state.counters["write_ms"] = 1000 * (w->timed->write_s - write_before) / iters;
    state.counters["db_MB"] = static_cast<double>(DbBytes(*w)) / 1e6;
    state.counters["GB_per_day"] = w->growth_bytes_per_s * 86400 / 1e9;
    const auto st = w->sqlite->Stats();
    state.counters["decisions_stored_per_tick"] =
        static_cast<double>(st.decisions_written - stats_before.decisions_written) / iters;
    state.counters["states_stored_per_tick"] =
        static_cast<double>(st.states_written - stats_before.states_written) / iters;
    state.counters["states_deferred_per_tick"] =
        static_cast<double>(st.states_deferred - stats_before.states_deferred) / iters;
    state.counters["states_snapshotted_per_tick"] =
        static_cast<double>(st.states_snapshotted - stats_before.states_snapshotted) / iters;
    state.counters["state_log_kB_per_tick"] =
        static_cast<double>(st.state_log_bytes - stats_before.state_log_bytes) / iters / 1e3;
    state.counters["checkpoints_per_tick"] =
        static_cast<double>(st.checkpoints - stats_before.checkpoints) / iters;
  }
}

void BM_TickPolicyMix(benchmark::State& s) { RunMix(s, false); }
// With the telemetry and the API's live board the daemon also updates every tick.
void BM_TickPolicyMixDaemonLike(benchmark::State& s) { RunMix(s, true); }

// The same with the store a deployment runs (issue 11 §4): SqliteStore, WAL, synchronous=NORMAL,
// 5-minute heartbeats, 7 days of retention. write_ms is the tick's WriteBatch (inside the tick
// time), db_MB the file after the warm-up and the iterations, GB_per_day the growth over the
// second quarter hour of the warm-up (after the first heartbeat period) extrapolated to a day
// (the state log is still filling then, up to its bound of 96 ticks). states_stored_per_tick
// counts the states that changed, states_snapshotted_per_tick those written in full, and
// state_log_kB_per_tick the deltas logged for the rest. WAL checkpoints run on the store's
// own thread (checkpoints_per_tick counts them; a thread beside the tick, so on one core its
// time lands in whichever phase it overlaps); AISCALE_INLINE_CHECKPOINT=1 leaves them in the
// commit, as SQLite does by default, to measure the difference side by side, and
// AISCALE_STORE_PAGE_SIZE=4096 gives a new file SQLite's default page size instead of 16 KiB.
void BM_TickPolicyMixSqlite(benchmark::State& s) { RunMix(s, false, 1); }
// The same with `store.state_every_ticks: 4`: each state written once a minute (and at once
// when its workload scales); states_deferred_per_tick counts the states left for a later tick.
void BM_TickPolicyMixSqliteStateEvery4(benchmark::State& s) { RunMix(s, false, 4); }

BENCHMARK(BM_TickPolicyMix)
    ->Arg(10000)
    ->Arg(1000)
    ->Arg(200)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TickPolicyMixSqlite)
    ->Arg(10000)
    ->Arg(1000)
    ->Arg(200)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TickPolicyMixSqliteStateEvery4)
    ->Arg(10000)
    ->Arg(200)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TickPolicyMixDaemonLike)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace aiscale

// The CLI's main tunes the allocator first (core/allocator_tuning.h); so does this one, and it
// links the same allocator (tcmalloc_minimal in the default build), so the ticks measured here
// run on the allocator `aiscale run` runs on. On a -DAISCALE_TCMALLOC=OFF build,
// AISCALE_DEFAULT_MALLOC=1 leaves glibc's defaults, to measure the difference side by side.
int main(int argc, char** argv) {
  const char* plain = std::getenv("AISCALE_DEFAULT_MALLOC");
  if (!(plain && std::string(plain) == "1")) aiscale::TuneAllocator();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
