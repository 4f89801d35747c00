// Dashboard benchmarks (issue 25 targets): the server time of the overview with 1,000
// workloads (target: median <= 50 ms) and of a workload page over 24 h of decisions (target:
// median <= 200 ms). Server time is the handler's: from the LiveView copy (and, for the page,
// the Store read) to the finished HTML, without the socket.
//
//   BM_Overview/1000          OverviewPage over 1,000 workloads, two signals each, a full
//                             64-point sparkline history and a last decision
//   BM_WorkloadPage24h/15     WorkloadPage with ?hours=24 over a SqliteStore holding 24 h of
//                             one workload's decisions, every tick stored (heartbeat 0), at a
//   BM_WorkloadPage24h/5      15 s period (5,760 decisions) and a 5 s period (17,280)
//
//   ./build/dashboard_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "server/dashboard.h"
#include "store/sqlite_store.h"

namespace aiscale {
namespace {

constexpr double kNowS = 1'790'000'000;

class BenchView final : public LiveView {
 public:
  std::vector<WorkloadView> Workloads() const override { return views; }
  std::optional<WorkloadView> Workload(const std::string& key) const override {
    for (const auto& v : views) {
      if (v.ref.Key() == key) return v;
    }
    return std::nullopt;
  }
  bool Ready() const override { return true; }
  std::vector<WorkloadView> views;
};

Decision MakeDecision(const std::string& key, double wall_s, int i) {
  Decision d;
  d.workload = key;
  d.policy = "hpa";
  d.at = AtSeconds(wall_s);
  d.wall = WallTime(Seconds(wall_s));
  d.current = 3 + i % 3;
  d.ready = d.current;
  d.inputs = {{"concurrency", SignalStatus::kOk, 1.4 + 0.1 * (i % 7), 4.2, 3, ""},
              {"kv_cache_usage", SignalStatus::kOk, 0.5, 1.5, 3, ""}};
  d.recommendation = {
      4 + i % 3,
      true,
      "hpa_ratio",
      "concurrency (Pods, AverageValue 1.5): usage 1.4, ratio 0.93 -> 4 [hpa_ratio]",
      {{"concurrency.target", 1.5}, {"concurrency.usage_ratio", 0.93}}};
  d.stabilized = d.constrained = 4 + i % 3;
  d.stabilize_reason = "scale-down window max";
  d.action = Action::kScaled;
  d.action_detail = "3 -> 4";
  return d;
}

WorkloadView MakeView(int i) {
  WorkloadView w;
  w.ref = {"InferenceService", "team-" + std::to_string(i % 20), "svc-" + std::to_string(i)};
  w.policy = "hpa";
  w.engine = "kubernetes";
  w.current = w.ready = w.desired = 4;
  w.min_replicas = 1;
  w.max_replicas = 16;
  w.last = MakeDecision(w.ref.Key(), kNowS, i);
  w.signals = {{"concurrency", "prometheus", SignalStatus::kOk, 1.4, 4.2, 3, 3.5, ""},
               {"kv_cache_usage", "prometheus", SignalStatus::kOk, 0.5, 1.5, 3, 3.5, ""}};
  for (int k = 0; k < 64; ++k) w.history.push_back({kNowS - 3600 + 56.0 * k, 3 + k % 4, 3 + k % 3});
  w.rule_since_s = kNowS - 600;
  return w;
}

void BM_Overview(benchmark::State& state) {
  BenchView view;
  for (int i = 0; i < state.range(0); ++i) view.views.push_back(MakeView(i));
  size_t bytes = 0;
  for (auto _ : state) {
    server::Reply r = server::OverviewPage(view, WallTime(Seconds(kNowS)), {});
    bytes = r.body.size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["html_kib"] = static_cast<double>(bytes) / 1024;
}
BENCHMARK(BM_Overview)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_WorkloadPage24h(benchmark::State& state) {
  const double period = static_cast<double>(state.range(0));
  const auto path = std::filesystem::temp_directory_path() /
                    ("aiscale_dashboard_bench_" + std::to_string(::getpid()) + ".db");
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);
  store::StoreOptions o;
  o.heartbeat = Duration::zero();  // every tick stored: the most a page can have to read
  o.sync_every_commit = false;
  auto store = store::SqliteStore::Open(path.string(), o);
  if (!store.ok()) {
    state.SkipWithError(store.status().message().c_str());
    return;
  }
  BenchView view;
  view.views.push_back(MakeView(0));
  const std::string key = view.views[0].ref.Key();
  const int n = static_cast<int>(86400 / period);
  std::vector<Decision> ds;
  for (int i = 0; i < n; ++i) ds.push_back(MakeDecision(key, kNowS - 86400 + period * (i + 1), i));
  std::vector<StoreWrite> batch;
  for (const Decision& d : ds) batch.push_back({&d, {}, false});
  if (!(*store)->WriteBatch(batch).ok()) state.SkipWithError("unable to fill the store");
  server::PageParams p;
  p.hours = 24;
  size_t bytes = 0;
  for (auto _ : state) {
    server::Reply r = server::WorkloadPage(view, store->get(), key, WallTime(Seconds(kNowS)), p);
    bytes = r.body.size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["decisions"] = n;
  state.counters["html_kib"] = static_cast<double>(bytes) / 1024;
  store->reset();
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);
}
BENCHMARK(BM_WorkloadPage24h)->Arg(15)->Arg(5)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiscale

BENCHMARK_MAIN();
