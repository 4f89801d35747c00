// AIScalers at scale and end to end, against the wire-level FakeKubeApiServer (a fake: Debian
// ships no kube-apiserver) on 127.0.0.1 (issue 26's targets):
//
// BM_AiScalerTick/10000: 10,000 AIScalers (the controller_bench policy mix: a quarter each of
// hpa, kpa, predictive and training, as AIScaler specs) listed by a KubeReflector (pages of
// 500) and made into workloads by AiScalerSync, then Controller::Tick as controller_bench
// times it. Counters: list_s (list to synced), apply_s (objects to bindings), rss_MB_objects
// (RSS the watch, the sync and the Controller hold for them: after minus before), tick_p50_ms
// (the median tick), after_tick_ms (building their statuses), status_changes_per_tick.
// BM_FileTick/10000 is the same mix built from config-file YAML, side by side (tick_p50_ms).
//
// BM_AiScalerChangeLatency: the real `aiscale run` (the binary beside this one) with
// `aiscalers:` and period 2 s watching the fake; 50 changes of an AIScaler's static replicas,
// each timed from the write to the Deployment's /scale holding the new size. Counters:
// p50_s, p90_s, p50_periods (the median in control periods; the target is <= 1).
//
// BM_AiScalerWatchRecovery: the same daemon while the fake API server restarts 10 times (down
// 2 s), the AIScaler changed during each outage. Counters: watch_p50_s (the server's return to a
// watch open again), applied_p50_s/max_s (its return to the change applied; target <= 5 s), missed.
//
//   ./build/aiscaler_bench --benchmark_filter=Tick --benchmark_repetitions=3
//   ./build/aiscaler_bench --benchmark_filter=ChangeLatency
//   ./build/aiscaler_bench --benchmark_filter=WatchRecovery
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "act/kubernetes_reflector.h"
#include "cli/aiscaler_sync.h"
#include "control/assembler.h"
#include "core/allocator_tuning.h"
#include "core/curl_http_client.h"
#include "core/system_clock.h"
#include "decide/pipeline.h"
#include "fakes/fake_kube_apiserver.h"
#include "fakes/yaml_json.h"
#include "sim/event_queue.h"

namespace aiscale {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kPods = 8;

double RssMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  }
  return 0;
}

// Sizes by workload index (names end in their index), so the source follows the scale.
class Engine final : public Actuator {
 public:
  explicit Engine(int n) : scale_(static_cast<size_t>(n), 2) {}
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
  static size_t Index(const WorkloadRef& ref) {
    return std::strtoul(ref.name.c_str() + ref.name.find_last_of('-') + 1, nullptr, 10);
  }
  int replicas(size_t i) const { return scale_[i]; }

 private:
  std::vector<int> scale_;
};

class Forward final : public Actuator {
 public:
  explicit Forward(Engine& e) : e_(e) {}
  std::string_view Name() const override { return "bench"; }
  Result<ScaleState> Observe(const WorkloadRef& r) override { return e_.Observe(r); }
  Status Apply(const WorkloadRef& r, int d) override { return e_.Apply(r, d); }

 private:
  Engine& e_;
};

// Per-pod serving values around each workload's demand; training throughput and progress.
class Source final : public MetricSource {
 public:
  explicit Source(const Engine& e) : e_(e) {}
  std::string_view Name() const override { return "bench"; }
  FetchResult Fetch(const MetricQuery& q, TimePoint now) override {
    const size_t i = Engine::Index(q.workload);
    const int n = std::clamp(e_.replicas(i), 1, kPods);
    const double t = SinceEpochSeconds(now);
    std::vector<Observation> out;
    if (q.signal == "samples_per_s")
      return std::vector<Observation>{{q.signal, "", 600.0 * n, now, true}};
    if (q.signal == "samples_remaining") {
      return std::vector<Observation>{{q.signal, "", std::max(0.0, 5e9 - 6000 * t), now, true}};
    }
    const double demand = (20 + static_cast<double>(i % 97) * 2) *
                          (1 + 0.3 * std::sin(t / 600 + static_cast<double>(i)));
    for (int p = 0; p < n; ++p) {
      double v = demand / n;
      if (q.signal == "kv_cache_usage") v = std::min(0.95, 0.6 * v / 24);
      if (q.signal == "request_rate") v /= 8;
      out.push_back({q.signal, "pod-" + std::to_string(p), v, now, true});
    }
    return out;
  }

 private:
  const Engine& e_;
};

// The controller_bench mix as AIScaler specs (signals from the source "prom").
json MixSpec(int i) {
  const json hpa = {{"name", "hpa"},
                    {"tolerance", 0.1},
                    {"metrics",
                     {{{"signal", "concurrency"},
                       {"type", "Pods"},
                       {"target", {{"type", "AverageValue"}, {"value", 24}}}},
                      {{"signal", "kv_cache_usage"},
                       {"type", "Pods"},
                       {"target", {{"type", "AverageValue"}, {"value", 0.8}}}}}}};
  const auto signals = [](std::initializer_list<const char*> names) {
    json out = json::array();
    for (const char* n : names) out.push_back({{"name", n}, {"source", "prom"}});
    return out;
  };
  json s = {
      {"scaleTargetRef",
       {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "w-" + std::to_string(i)}}},
      {"min_replicas", 1},
      {"max_replicas", 32}};
  switch (i % 4) {
    case 0:
      s["behavior"] = {{"scaleDown", {{"stabilizationWindowSeconds", 300}}}};
      s["policy"] = hpa;
      s["signals"] = signals({"concurrency", "kv_cache_usage"});
      break;
    case 1:
      s["policy"] = {
          {"name", "kpa"}, {"signal", "concurrency"}, {"target", 16}, {"stable_window", "60s"}};
      s["signals"] = signals({"concurrency"});
      break;
    case 2:
      s["cold_start"] = "2m";
      s["policy"] = {{"name", "predictive"},
                     {"signal", "request_rate"},
                     {"capacity_per_replica", 2.0},
                     {"target_utilization", 0.8},
                     {"min_errors", 10}};
      s["signals"] = signals({"request_rate"});
      break;
    default:
      s["kind"] = "PyTorchJob";
      s["min_replicas"] = 2;
      s["max_replicas"] = 16;
      s["policy"] = {{"name", "training"}, {"rescales_per_hour", 1}};
      s["signals"] = signals({"samples_per_s", "samples_remaining"});
  }
  return s;
}

json AiScaler(const std::string& ns, const std::string& name, json spec) {
  return {{"apiVersion", "aiscale.dev/v1alpha1"},
          {"kind", "AIScaler"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", std::move(spec)}};
}

bool LoadCrd(testing::FakeKubeApiServer& api) {
  const std::string path = std::string(AISCALE_SOURCE_DIR) + "/deploy/06-aiscaler-crd.yaml";
  return api.AddCrd(testing::YamlToJson(YAML::LoadFile(path)));
}

struct World {
  sim::SimClock clock{AtSeconds(1'700'000'000)};
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Source> source;
  std::unique_ptr<cli::WorkloadRegistries> reg;
  std::vector<SourceSpec> sources;
  std::unique_ptr<control::Controller> ctl;
  std::unique_ptr<cli::AiScalerSync> sync;
  double list_s = 0, apply_s = 0, rss_mb = 0;
};

// 10,000 objects: created in the fake, listed by a reflector, applied by the sync.
std::unique_ptr<World> ObjectWorld(int count, std::string& error) {
  auto w = std::make_unique<World>();
  testing::FakeKubeApiServer api;
  if (!api.Start() || !LoadCrd(api)) {
    error = "fake API server or CRD";
    return nullptr;
  }
  for (int i = 0; i < count; ++i) {
    const auto r = api.CreateCustom(AiScaler("bench", "w-" + std::to_string(i), MixSpec(i)));
    if (r.first != 201) {
      error = r.second.dump();
      return nullptr;
    }
  }
  const double rss0 = RssMb();
  CurlHttpClient http;
  SystemClock real;
  act::KubeEndpoint ep;
  ep.server = api.Url();
  ep.token = "fake-token";
  act::KubeClient client(ep, http, real, {});
  act::KubeReflector reflector("/apis/aiscale.dev/v1alpha1/aiscalers", client, real, {}, nullptr,
                               nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  std::thread run([&] { reflector.Run(); });
  while (!reflector.synced()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  w->list_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  reflector.Stop();
  run.join();
  w->engine = std::make_unique<Engine>(count);
  w->source = std::make_unique<Source>(*w->engine);
  w->reg = std::make_unique<cli::WorkloadRegistries>(cli::WorkloadRegistries::Default().value());
  w->sources.resize(1);
  w->sources[0].name = "prom";
  w->ctl = std::make_unique<control::Controller>(w->clock, nullptr, control::ControllerOptions{});
  cli::AiScalerSyncEnv env;
  env.ctx.registries = w->reg.get();
  env.ctx.sources = &w->sources;
  Engine* engine = w->engine.get();
  env.make_actuator = [engine](const WorkloadSpec&) -> Result<std::unique_ptr<Actuator>> {
    return std::unique_ptr<Actuator>(std::make_unique<Forward>(*engine));
  };
  Source* src = w->source.get();
  env.source_by_name = [src](const std::string&) -> MetricSource* { return src; };
  env.clock = &w->clock;
  w->sync = std::make_unique<cli::AiScalerSync>(std::move(env));
  const auto a0 = std::chrono::steady_clock::now();
  w->sync->Apply(reflector.TakeChanges(), *w->ctl);
  w->apply_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count();
  w->rss_mb = RssMb() - rss0;
  if (w->sync->acting() != static_cast<size_t>(count)) {
    error = "only " + std::to_string(w->sync->acting()) + " AIScalers acted on";
    return nullptr;
  }
  return w;
}

// The same mix from config-file YAML, as controller_bench builds it.
std::unique_ptr<World> FileWorld(int count, std::string& error) {
  auto w = std::make_unique<World>();
  w->engine = std::make_unique<Engine>(count);
  w->source = std::make_unique<Source>(*w->engine);
  w->reg = std::make_unique<cli::WorkloadRegistries>(cli::WorkloadRegistries::Default().value());
  w->sources.resize(1);
  w->sources[0].name = "prom";
  w->ctl = std::make_unique<control::Controller>(w->clock, nullptr, control::ControllerOptions{});
  control::SourceLookup lookup;
  lookup.by_name = [&](const std::string&) -> MetricSource* { return w->source.get(); };
  for (int i = 0; i < count; ++i) {
    json spec = MixSpec(i);
    spec.erase("scaleTargetRef");
    spec["name"] = "w-" + std::to_string(i);
    spec["namespace"] = "bench";
    if (!spec.contains("kind")) spec["kind"] = "Deployment";
    config::ConfigErrors errors;
    const config::ConfigNode root = config::ParseConfig(json{{"w", spec}}.dump(), "bench", errors);
    auto ws = cli::ParseWorkloadEntry(root.Child("w"), *w->reg, 15, w->sources);
    if (!ws) {
      error = errors.ToStatus().message();
      return nullptr;
    }
    auto b = control::Assemble(*ws, ws->pipeline, lookup, w->engine.get());
    if (!b.ok() || !w->ctl->Add(std::move(b).value()).ok()) {
      error = "assemble";
      return nullptr;
    }
  }
  return w;
}

void RunTicks(benchmark::State& state, World& w) {
  for (int k = 0; k < 120; ++k) {  // 30 simulated minutes, as controller_bench warms up
    w.clock.Advance(Seconds(15));
    w.ctl->Collect();
    const auto d = w.ctl->Tick();
    if (w.sync) w.sync->AfterTick(d);
  }
  std::vector<double> tick_s;
  double after_s = 0;
  const size_t queued0 = w.sync ? w.sync->statuses_queued() : 0;
  for (auto _ : state) {
    state.PauseTiming();
    w.clock.Advance(Seconds(15));
    w.ctl->Collect();
    state.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Decision> d = w.ctl->Tick();
    tick_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    state.PauseTiming();
    const auto a0 = std::chrono::steady_clock::now();
    if (w.sync) w.sync->AfterTick(d);
    after_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count();
    state.ResumeTiming();
  }
  const double iters = static_cast<double>(state.iterations());
  std::nth_element(tick_s.begin(), tick_s.begin() + tick_s.size() / 2, tick_s.end());
  state.counters["tick_p50_ms"] = 1000 * tick_s[tick_s.size() / 2];
  state.counters["workloads"] = static_cast<double>(w.ctl->size());
  if (w.sync) {
    state.counters["list_s"] = w.list_s;
    state.counters["apply_s"] = w.apply_s;
    state.counters["rss_MB_objects"] = w.rss_mb;
    state.counters["after_tick_ms"] = 1000 * after_s / iters;
    state.counters["status_changes_per_tick"] =
        static_cast<double>(w.sync->statuses_queued() - queued0) / iters;
  }
}

void BM_AiScalerTick(benchmark::State& state) {
  static std::unique_ptr<World> world;
  std::string error;
  if (!world) world = ObjectWorld(static_cast<int>(state.range(0)), error);
  if (!world) return state.SkipWithError(error.c_str());
  RunTicks(state, *world);
}

void BM_FileTick(benchmark::State& state) {
  static std::unique_ptr<World> world;
  std::string error;
  if (!world) world = FileWorld(static_cast<int>(state.range(0)), error);
  if (!world) return state.SkipWithError(error.c_str());
  RunTicks(state, *world);
}

// ---- End to end: the daemon binary against the fake ----

std::string Binary() {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  return (self.parent_path() / "aiscale").string();
}

pid_t Spawn(const std::string& config, const std::string& log) {
  const std::string bin = Binary();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  execl(bin.c_str(), bin.c_str(), "run", "-c", config.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

json StaticSpec(const std::string& name, int replicas) {
  return {{"scaleTargetRef", {{"kind", "Deployment"}, {"name", name}}},
          {"min_replicas", 1},
          {"max_replicas", 16},
          {"policy", {{"name", "static"}, {"replicas", replicas}}}};
}

// `aiscale run` with `aiscalers:` in namespace "ai" watching `api`, period `period_s`; stopped
// (SIGTERM) and its files removed when this goes.
class Daemon {
 public:
  Daemon(testing::FakeKubeApiServer& api, double period_s)
      : dir_(fs::temp_directory_path() / ("aiscale_bench_" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
    std::ofstream(dir_ / "kubeconfig") << testing::FakeKubeconfig(api.Url());
    std::ofstream(dir_ / "config.yaml")
        << "apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\nspec:\n  period: " << period_s
        << "s\n  server: {enabled: false}\n  aiscalers:\n    namespaces: [ai]\n"
        << "    auth: {kubeconfig: " << (dir_ / "kubeconfig").string() << "}\n";
    pid_ = Spawn((dir_ / "config.yaml").string(), (dir_ / "aiscale.log").string());
  }
  ~Daemon() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    fs::remove_all(dir_);
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

 private:
  fs::path dir_;
  pid_t pid_;
};

using BenchClock = std::chrono::steady_clock;

double Since(BenchClock::time_point t0) {
  return std::chrono::duration<double>(BenchClock::now() - t0).count();
}

// Polls every 2 ms until `done` or `limit`; the seconds it took.
template <typename F>
double WaitSeconds(F done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto t0 = BenchClock::now();
  while (!done() && BenchClock::now() - t0 < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return Since(t0);
}

void SetStaticReplicas(testing::FakeKubeApiServer& api, int want) {
  json o = api.Object("aiscale.dev", "aiscalers", "ai", "llm");
  o["spec"]["policy"]["replicas"] = want;
  api.UpdateCustom(o);
}

void Quantiles(benchmark::State& state, std::vector<double> v, const std::string& prefix) {
  std::sort(v.begin(), v.end());
  state.counters[prefix + "p50_s"] = v[v.size() / 2];
  state.counters[prefix + "p90_s"] = v[v.size() * 9 / 10];
  state.counters[prefix + "max_s"] = v.back();
}

int LlmReplicas(testing::FakeKubeApiServer& api) {
  return api.Object("apps", "deployments", "ai", "llm")["spec"].value("replicas", -1);
}

bool StartWithOneAiScaler(testing::FakeKubeApiServer& api) {
  if (!api.Start() || !LoadCrd(api)) return false;
  api.AddDeployment("ai", "llm", 2, 2);
  api.CreateCustom(AiScaler("ai", "llm", StaticSpec("llm", 2)));
  return true;
}

void BM_AiScalerChangeLatency(benchmark::State& state) {
  constexpr double kPeriod = 2;
  testing::FakeKubeApiServer api;
  if (!StartWithOneAiScaler(api)) return state.SkipWithError("fake API server or CRD");
  Daemon daemon(api, kPeriod);
  const auto replicas = [&] { return LlmReplicas(api); };
  std::vector<double> latency;
  for (auto _ : state) {
    for (int k = 0; k < 50; ++k) {
      const int want = 3 + k % 2;
      SetStaticReplicas(api, want);
      latency.push_back(WaitSeconds([&] { return replicas() == want; }));
      // A random phase for the next write against the tick.
      std::this_thread::sleep_for(std::chrono::milliseconds(100 + (k * 773) % 1900));
    }
  }
  state.counters["changes"] = static_cast<double>(latency.size());
  std::sort(latency.begin(), latency.end());
  state.counters["p50_periods"] = latency[latency.size() / 2] / kPeriod;
  Quantiles(state, latency, "");
}

// 10 API server restarts (down 2 s each) under a running `aiscale run` (period 2 s); during each
// outage the AIScaler is changed. Counters: watch_* from the server's return to a watch open
// again, applied_* from its return to the Deployment holding the change made while it was down
// (the target: within 5 s, nothing missed; missed counts the changes never applied in 30 s).
void BM_AiScalerWatchRecovery(benchmark::State& state) {
  constexpr double kPeriod = 2;
  testing::FakeKubeApiServer api;
  if (!StartWithOneAiScaler(api)) return state.SkipWithError("fake API server or CRD");
  Daemon daemon(api, kPeriod);
  const auto replicas = [&] { return LlmReplicas(api); };
  WaitSeconds([&] { return api.OpenWatches() > 0 && replicas() == 2; });
  std::vector<double> watch, applied;
  int missed = 0;
  for (auto _ : state) {
    for (int k = 0; k < 10; ++k) {
      const int want = 3 + k % 2;
      BenchClock::time_point back;
      bool restarted = false;
      std::thread restart([&] {
        restarted = api.Restart(std::chrono::milliseconds(2000));
        back = BenchClock::now();
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(500 + 97 * k));
      SetStaticReplicas(api, want);
      restart.join();
      if (!restarted) return state.SkipWithError("the fake could not bind its port again");
      WaitSeconds([&] { return api.OpenWatches() > 0; });
      watch.push_back(Since(back));
      WaitSeconds([&] { return replicas() == want; });
      applied.push_back(Since(back));
      if (replicas() != want) ++missed;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  state.counters["restarts"] = static_cast<double>(applied.size());
  state.counters["missed"] = missed;
  Quantiles(state, watch, "watch_");
  Quantiles(state, applied, "applied_");
}

BENCHMARK(BM_AiScalerTick)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FileTick)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AiScalerChangeLatency)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_AiScalerWatchRecovery)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace aiscale

int main(int argc, char** argv) {
  aiscale::TuneAllocator();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
