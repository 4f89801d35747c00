// Live tick against a real Prometheus (issue 7): 1,000 workloads x 3 signals, each signal a
// query template with workload="{workload}", through the real PrometheusSource over
// CurlHttpClient, on a real Controller with a ThreadPoolExecutor and the SystemClock.
//
// Part 1, per tick (tick 0 also creates every signal's histories): HTTP requests sent (a counting
// HttpClient; batched, they should be at most the 3 distinct templates), collection wall time
// (Collect() until every fetch finished), Tick() wall time, and how many of the 3,000 signals were
// ok. Part 2, a hung source: two daemon-like controllers run side by side, ticking every period
// half a period apart, each with its own collect thread (as `aiscale run`): A has the 1,000
// workloads; B has the same 1,000 plus 10 workloads whose source hangs (sleeps 30 s per
// batch, far past its 1 s deadline). For every healthy workload's decision: the delay from the
// tick's due time to the decision (Decision.at) and to the tick's end (the decisions are
// recorded as one batch then), p50/p99 for A and B and their ratio. Target: B/A ~ 1 (the hung
// source adds nothing to the others), and the hung workloads read DeadlineExceeded.
//
// Not a Google Benchmark program: it needs a running Prometheus. scripts/bench_live.sh starts
// the exporter (tests/integration/tools/many_targets.py) and Prometheus, then runs
//   ./build/live_tick_bench --prometheus http://127.0.0.1:PORT [--workloads 1000]
//       [--ticks 10] [--hung-ticks 20] [--period 2]
// Exit status: 0 when it ran (the figures are the result), 2 on bad arguments or set-up failure.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "control/assembler.h"
#include "control/controller.h"
#include "control/executor.h"
#include "core/config/config_node.h"
#include "core/curl_http_client.h"
#include "core/system_clock.h"
#include "decide/pipeline.h"
#include "decide/policy_registry.h"
#include "monitor/prometheus_source.h"

namespace aiscale {
namespace {

using Steady = std::chrono::steady_clock;

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Counts every request sent through it; thread-safe like the client it wraps.
class CountingHttpClient final : public HttpClient {
 public:
  explicit CountingHttpClient(HttpClient& inner) : inner_(inner) {}
  Result<HttpResponse> Send(const HttpRequest& req) override {
    requests_.fetch_add(1);
    return inner_.Send(req);
  }
  size_t requests() const { return requests_.load(); }

 private:
  HttpClient& inner_;
  std::atomic<size_t> requests_{0};
};

// Holds each workload at the size last applied (2 to start: the exporter's pod count).
class MemoryActuator final : public Actuator {
 public:
  std::string_view Name() const override { return "memory"; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override {
    std::lock_guard<std::mutex> lock(mu_);
    ScaleState s;
    auto it = replicas_.find(ref.Key());
    s.current = s.ready = it == replicas_.end() ? 2 : it->second;
    return s;
  }
  Status Apply(const WorkloadRef& ref, int desired) override {
    std::lock_guard<std::mutex> lock(mu_);
    replicas_[ref.Key()] = desired;
    return Status::Ok();
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, int> replicas_;
};

// A source that never answers in time: each batch sleeps `hang` (ending early when the bench
// stops, so shutdown does not wait for it), then fails.
class HungSource final : public MetricSource {
 public:
  explicit HungSource(Duration hang) : hang_(hang) {}
  std::string_view Name() const override { return "hung"; }
  FetchResult Fetch(const MetricQuery& q, TimePoint now) override {
    return FetchBatch({q}, now).front();
  }
  std::vector<FetchResult> FetchBatch(const std::vector<MetricQuery>& qs, TimePoint) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::nanoseconds(hang_.count()), [&] { return stop_; });
    return std::vector<FetchResult>(qs.size(), Status::Unavailable("hung source gave up"));
  }
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }

 private:
  Duration hang_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

struct Options {
  std::string url;
  int workloads = 1000;
  int ticks = 10;
  int hung_ticks = 20;
  double period_s = 2;
};

// The workload entry every bench workload shares: HPA on the three signals, which the
// exporter's values keep near 2 replicas.
constexpr const char* kWorkloadYaml = R"(name: bench
kind: InferenceService
min_replicas: 1
max_replicas: 8
staleness: 10s
policy:
  name: hpa
  metrics:
    - {signal: concurrency, type: Pods, target: {type: AverageValue, value: 24}}
    - {signal: kv_cache_usage, type: Pods, target: {type: AverageValue, value: 0.8}}
    - {signal: queue_len, type: Pods, target: {type: AverageValue, value: 5}}
)";

const std::vector<std::pair<std::string, std::string>> kTemplates = {
    {"concurrency", R"(sum by (workload, pod) (vllm:num_requests_running{workload="{workload}"}))"},
    {"kv_cache_usage",
     R"(avg by (workload, pod) (vllm:kv_cache_usage_perc{workload="{workload}"}))"},
    {"queue_len", R"(sum by (workload, pod) (vllm:num_requests_waiting{workload="{workload}"}))"},
};

// A controller as `aiscale run` wires one: its own pool, the daemon's pool size and timeouts.
struct World {
  std::unique_ptr<control::ThreadPoolExecutor> executor;
  std::unique_ptr<control::Controller> ctl;
};

World MakeWorld(Clock& clock, const Options& o, size_t sources) {
  World w;
  w.executor = std::make_unique<control::ThreadPoolExecutor>(std::max<size_t>(4, 2 * sources + 2));
  control::ControllerOptions co;
  co.executor = w.executor.get();
  co.collect_interval = Seconds(o.period_s);
  co.fetch_timeout = std::min(Seconds(o.period_s), Seconds(5));
  w.ctl = std::make_unique<control::Controller>(clock, nullptr, co);
  return w;
}

// Adds workloads `prefix`0..count-1 reading their three signals from `source`.
Status AddWorkloads(control::Controller& ctl, const std::string& prefix, int count,
                    MetricSource* source, Duration timeout, Actuator& actuator) {
  auto registry = decide::PolicyRegistry::Default();
  if (!registry.ok()) return registry.status();
  config::ConfigErrors errors;
  config::ConfigNode node = config::ParseConfig(kWorkloadYaml, "bench.yaml", errors);
  control::SourceLookup lookup;
  lookup.by_name = [source](const std::string&) { return source; };
  for (int i = 0; i < count; ++i) {
    auto pipeline = decide::BuildPipeline(*registry, node, node.Child("policy"), 2, 0);
    if (!pipeline.ok()) return pipeline.status();
    WorkloadSpec spec = decide::ReadWorkloadFields(node, 2);
    spec.ref.name = prefix + std::to_string(i);
    spec.ref.namespace_ = "bench";
    for (const auto& [signal, query] : kTemplates) {
      spec.signals.push_back({signal, "src", query, Duration{}, timeout});
    }
    auto b = control::Assemble(spec, *pipeline, lookup, &actuator);
    if (!b.ok()) return b.status();
    RETURN_IF_ERROR(ctl.Add(std::move(b).value()));
  }
  return errors.empty() ? Status::Ok() : errors.ToStatus();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

size_t OkSignals(const std::vector<Decision>& ds, char prefix) {
  size_t ok = 0;
  for (const Decision& d : ds) {
    if (d.workload.rfind(std::string("bench/") + prefix, 0) != 0) continue;
    for (const SignalInput& in : d.inputs) ok += in.status == SignalStatus::kOk ? 1 : 0;
  }
  return ok;
}

// Part 1: Collect, wait for every fetch, Tick; one line per tick.
int RunSteady(const Options& o, SystemClock& clock, CountingHttpClient& http) {
  monitor::PrometheusSourceConfig pc;
  pc.url = o.url;
  monitor::PrometheusSource prom(pc, http);
  MemoryActuator actuator;
  World w = MakeWorld(clock, o, 1);
  if (Status st = AddWorkloads(*w.ctl, "w", o.workloads, &prom, Duration{}, actuator); !st.ok()) {
    std::fprintf(stderr, "live_tick_bench: %s\n", st.message().c_str());
    return 2;
  }
  std::printf("part 1: %d workloads x %zu signals (%zu query templates), period %.1f s\n",
              o.workloads, kTemplates.size(), kTemplates.size(), o.period_s);
  std::printf("%5s %9s %12s %9s %12s\n", "tick", "requests", "collect_ms", "tick_ms", "signals_ok");
  std::vector<double> collect_ms, tick_ms, requests;
  TimePoint due = clock.Now();
  for (int k = 0; k < o.ticks; ++k) {
    // Every signal is due again one interval after its last fetch started.
    clock.SleepUntil(std::max(due, w.ctl->NextCollect()));
    due += Seconds(o.period_s);
    const size_t r0 = http.requests();
    const auto c0 = Steady::now();
    w.ctl->Collect();
    while (w.ctl->collector().InFlight() > 0 && Steady::now() - c0 < std::chrono::seconds(10)) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const auto c1 = Steady::now();
    const size_t sent = http.requests() - r0;
    std::vector<Decision> ds = w.ctl->Tick();
    const auto t1 = Steady::now();
    const size_t ok = OkSignals(ds, 'w');
    std::printf("%5d %9zu %12.1f %9.1f %7zu/%zu\n", k, sent, Ms(c1 - c0), Ms(t1 - c1), ok,
                ds.size() * kTemplates.size());
    collect_ms.push_back(Ms(c1 - c0));
    tick_ms.push_back(Ms(t1 - c1));
    requests.push_back(static_cast<double>(sent));
  }
  std::printf("median: requests %.0f, collect %.1f ms, tick %.1f ms\n\n", Percentile(requests, 0.5),
              Percentile(collect_ms, 0.5), Percentile(tick_ms, 0.5));
  return 0;
}

// The daemon's collect thread: Collect, then wait for the next due fetch (at most 100 ms).
void CollectLoop(control::Controller& ctl, Clock& clock, const std::atomic<bool>& stop) {
  while (!stop) {
    ctl.Collect();
    const TimePoint next = std::min(ctl.NextCollect(), clock.Now() + Seconds(0.1));
    while (!stop && clock.Now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

struct Delays {
  std::vector<double> decided_ms, recorded_ms, tick_ms;
  size_t healthy_ok = 0, healthy_total = 0, hung_deadline = 0, hung_ok = 0, hung_total = 0;
};

void Record(const std::vector<Decision>& ds, TimePoint due, TimePoint end, Delays& out) {
  out.tick_ms.push_back(ToSeconds(end - due) * 1000);
  for (const Decision& d : ds) {
    const bool hung = d.workload.rfind("bench/h", 0) == 0;
    for (const SignalInput& in : d.inputs) {
      if (hung) {
        out.hung_total += 1;
        out.hung_deadline += in.detail.find("deadline") != std::string::npos ? 1 : 0;
        out.hung_ok += in.status == SignalStatus::kOk ? 1 : 0;
      } else {
        out.healthy_total += 1;
        out.healthy_ok += in.status == SignalStatus::kOk ? 1 : 0;
      }
    }
    if (hung) continue;
    out.decided_ms.push_back(ToSeconds(d.at - due) * 1000);
    out.recorded_ms.push_back(ToSeconds(end - due) * 1000);
  }
}

// Part 2: A (healthy only) and B (healthy + hung) tick alternately, half a period apart.
int RunHung(const Options& o, SystemClock& clock, CountingHttpClient& http) {
  monitor::PrometheusSourceConfig pc;
  pc.url = o.url;
  monitor::PrometheusSource prom_a(pc, http), prom_b(pc, http);
  HungSource hung(Seconds(30));
  MemoryActuator act_a, act_b;
  World a = MakeWorld(clock, o, 1), b = MakeWorld(clock, o, 2);
  Status st = AddWorkloads(*a.ctl, "w", o.workloads, &prom_a, Duration{}, act_a);
  if (st.ok()) st = AddWorkloads(*b.ctl, "w", o.workloads, &prom_b, Duration{}, act_b);
  if (st.ok()) st = AddWorkloads(*b.ctl, "h", 10, &hung, Seconds(1), act_b);
  if (!st.ok()) {
    std::fprintf(stderr, "live_tick_bench: %s\n", st.message().c_str());
    return 2;
  }
  // B's collections start half a period after A's, as its ticks do, so each controller's
  // ticks meet the same load: its own collection at the same phase, the other's half a period
  // away.
  std::atomic<bool> stop{false};
  const Duration period = Seconds(o.period_s);
  const TimePoint start = clock.Now();
  std::thread ca([&] { CollectLoop(*a.ctl, clock, stop); });
  clock.SleepUntil(start + period / 2);
  std::thread cb([&] { CollectLoop(*b.ctl, clock, stop); });
  TimePoint due = start + period;  // one period for the first fetches, as the daemon
  Delays da, db;
  // Tick 0 of each controller is not counted: it creates every signal's histories.
  for (int k = 0; k <= o.hung_ticks; ++k) {
    clock.SleepUntil(due);
    auto ds = a.ctl->Tick();
    if (k > 0) Record(ds, due, clock.Now(), da);
    const TimePoint due_b = due + period / 2;
    clock.SleepUntil(due_b);
    ds = b.ctl->Tick();
    if (k > 0) Record(ds, due_b, clock.Now(), db);
    due += period;
  }
  stop = true;
  hung.Stop();
  ca.join();
  cb.join();
  a.executor.reset();
  b.executor.reset();

  std::printf("part 2: %d ticks each, healthy workloads' delay from tick due (ms)\n", o.hung_ticks);
  std::printf("%-28s %10s %10s %10s %10s %10s\n", "", "decided50", "decided99", "record50",
              "record99", "tick_max");
  auto row = [](const char* name, const Delays& d) {
    std::printf("%-28s %10.2f %10.2f %10.2f %10.2f %10.2f\n", name, Percentile(d.decided_ms, 0.5),
                Percentile(d.decided_ms, 0.99), Percentile(d.recorded_ms, 0.5),
                Percentile(d.recorded_ms, 0.99), Percentile(d.tick_ms, 1.0));
  };
  row("A: without hung source", da);
  row("B: with hung source", db);
  auto ratio = [](double x, double y) { return y > 0 ? x / y : 0.0; };
  std::printf("%-28s %10.2f %10.2f %10.2f %10.2f %10.2f\n", "ratio B/A",
              ratio(Percentile(db.decided_ms, 0.5), Percentile(da.decided_ms, 0.5)),
              ratio(Percentile(db.decided_ms, 0.99), Percentile(da.decided_ms, 0.99)),
              ratio(Percentile(db.recorded_ms, 0.5), Percentile(da.recorded_ms, 0.5)),
              ratio(Percentile(db.recorded_ms, 0.99), Percentile(da.recorded_ms, 0.99)),
              ratio(Percentile(db.tick_ms, 1.0), Percentile(da.tick_ms, 1.0)));
  std::printf(
      "healthy signals ok: A %zu/%zu, B %zu/%zu; hung workloads' signals reading "
      "DeadlineExceeded: %zu/%zu (ok: %zu; the rest read the hang's own failure when it ended)\n",
      da.healthy_ok, da.healthy_total, db.healthy_ok, db.healthy_total, db.hung_deadline,
      db.hung_total, db.hung_ok);
  return 0;
}

bool ParseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (a == "--prometheus") {
      o.url = v;
    } else if (a == "--workloads") {
      o.workloads = std::atoi(v);
    } else if (a == "--ticks") {
      o.ticks = std::atoi(v);
    } else if (a == "--hung-ticks") {
      o.hung_ticks = std::atoi(v);
    } else if (a == "--period") {
      o.period_s = std::atof(v);
    } else {
      return false;
    }
  }
  return !o.url.empty() && o.workloads > 0 && o.ticks >= 0 && o.hung_ticks >= 0 && o.period_s > 0;
}

}  // namespace
}  // namespace aiscale

int main(int argc, char** argv) {
  aiscale::Options o;
  if (!aiscale::ParseArgs(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: live_tick_bench --prometheus URL [--workloads N] [--ticks N] "
                 "[--hung-ticks N] [--period S]\n");
    return 2;
  }
  aiscale::CurlHttpClient curl;
  aiscale::CountingHttpClient http(curl);
  aiscale::SystemClock clock;
  int rc = aiscale::RunSteady(o, clock, http);
  if (rc == 0 && o.hung_ticks > 0) rc = aiscale::RunHung(o, clock, http);
  return rc;
}
