// One engine hung, every other workload on time (issue 27 §2). A Controller as the daemon
// builds it (ControllerOptions::engine_calls: 8 threads per engine, the observations awaited
// half a period) ticks once a period over `--workloads` workloads on a "kubernetes" engine whose
// calls take `--call-ms` each, plus one workload on a "slurm" engine that never answers within
// `--hang-s` (the Kubernetes call bound: 10 s). Every tick each healthy workload applies a new
// size (its policy alternates 2 and 3). For each apply: the delay from the tick's start (when
// the decision is due) to the Apply's return. The same run with the engines called inline on
// the tick thread (the code before issue 27 §2) is the baseline. Target: p99 <= the period.
//
//   ./build/engine_hang_bench [--workloads 20] [--ticks 15] [--period 2] [--call-ms 5]
//       [--hang-s 10] [--inline-ticks 2]
// Not a Google Benchmark: it measures waits on real threads, one run is the figure.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "control/controller.h"
#include "core/system_clock.h"

namespace aiscale {
namespace {

using Steady = std::chrono::steady_clock;

// Alternates 2 and 3, so every tick applies.
class FlipPolicy final : public Policy {
 public:
  std::string_view Name() const override { return "flip"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState&) const override {
    return {in.current == 2 ? 3 : 2, true, "flip", "", {}};
  }
  std::vector<std::string> Signals() const override { return {}; }
};

// Each call takes `call` (a round trip to an API server); a hung engine's take `hang`.
class SlowEngine final : public Actuator {
 public:
  SlowEngine(std::string name, std::chrono::milliseconds call)
      : name_(std::move(name)), call_(call) {}
  std::string_view Name() const override { return name_; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override {
    std::this_thread::sleep_for(call_);
    std::lock_guard<std::mutex> lock(mu_);
    ScaleState s;
    s.current = s.ready = size_.count(ref.Key()) ? size_[ref.Key()] : 2;
    return s;
  }
  Status Apply(const WorkloadRef& ref, int desired) override {
    std::this_thread::sleep_for(call_);
    std::lock_guard<std::mutex> lock(mu_);
    size_[ref.Key()] = desired;
    applied_.push_back(Steady::now());
    return Status::Ok();
  }
  std::vector<Steady::time_point> TakeApplied() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(applied_, {});
  }

 private:
  std::string name_;
  std::chrono::milliseconds call_;
  std::mutex mu_;
  std::map<std::string, int> size_;
  std::vector<Steady::time_point> applied_;
};

struct Args {
  int workloads = 20, ticks = 15, inline_ticks = 2, call_ms = 5;
  double period_s = 2, hang_s = 10;
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// Ticks once a period; returns every healthy apply's delay after its tick's start, in seconds.
std::vector<double> Run(const Args& a, bool threaded, int ticks) {
  SystemClock clock;
  SlowEngine kube("kubernetes", std::chrono::milliseconds(a.call_ms));
  SlowEngine slurm("slurm", std::chrono::milliseconds(static_cast<int>(a.hang_s * 1000)));
  control::ControllerOptions o;
  if (threaded) {
    control::EngineCallOptions calls;  // as the daemon sets them (src/cli/daemon.cc)
    calls.observe_deadline =
        std::clamp(Seconds(a.period_s) / 2, Duration(Seconds(1)), Duration(Seconds(10)));
    o.engine_calls = calls;
  }
  control::Controller ctl(clock, nullptr, o);
  auto policy = std::make_shared<FlipPolicy>();
  for (int i = 0; i <= a.workloads; ++i) {
    control::WorkloadBinding b;
    std::string name = "w";  // appended, not "w" + ...: GCC 12's -Wrestrict false positive
    name += std::to_string(i);
    b.ref = {"Deployment", "ns", i == a.workloads ? "hung" : name};
    b.policy = policy;
    b.actuator = i == a.workloads ? static_cast<Actuator*>(&slurm) : &kube;
    if (!ctl.Add(std::move(b)).ok()) std::exit(2);
  }
  std::vector<double> delays;
  const auto period =
      std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(a.period_s));
  Steady::time_point due = Steady::now();
  for (int t = 0; t < ticks; ++t) {
    std::this_thread::sleep_until(due);
    (void)ctl.Tick();
    for (Steady::time_point at : kube.TakeApplied()) {
      delays.push_back(std::chrono::duration<double>(at - due).count());
    }
    due += period;
    if (due < Steady::now()) due = Steady::now();  // a tick longer than the period: next at once
  }
  return delays;
}

void Report(const char* name, const std::vector<double>& d, double period_s) {
  std::printf("| %-34s | %5zu | %7.3f | %7.3f | %7.3f | %5.2f |\n", name, d.size(),
              Quantile(d, 0.5), Quantile(d, 0.99),
              d.empty() ? 0 : *std::max_element(d.begin(), d.end()), Quantile(d, 0.99) / period_s);
}

bool ParseArgs(int argc, char** argv, Args& a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (k == "--workloads")
      a.workloads = static_cast<int>(v);
    else if (k == "--ticks")
      a.ticks = static_cast<int>(v);
    else if (k == "--inline-ticks")
      a.inline_ticks = static_cast<int>(v);
    else if (k == "--call-ms")
      a.call_ms = static_cast<int>(v);
    else if (k == "--period")
      a.period_s = v;
    else if (k == "--hang-s")
      a.hang_s = v;
    else
      return false;
  }
  return argc % 2 == 1 && a.workloads > 0 && a.ticks > 0 && a.period_s > 0;
}

}  // namespace
}  // namespace aiscale

int main(int argc, char** argv) {
  aiscale::Args a;
  if (!aiscale::ParseArgs(argc, argv, a)) {
    std::fprintf(stderr,
                 "usage: engine_hang_bench [--workloads N] [--ticks N] [--period S] "
                 "[--call-ms MS] [--hang-s S] [--inline-ticks N]\n");
    return 2;
  }
  std::printf("%d healthy workloads (calls %d ms) + 1 on an engine hung %.0f s; period %.1f s\n",
              a.workloads, a.call_ms, a.hang_s, a.period_s);
  std::printf("| %-34s | %5s | %7s | %7s | %7s | %5s |\n", "engines called", "applies", "p50 s",
              "p99 s", "max s", "p99/period");
  std::printf("|---|---|---|---|---|---|\n");
  aiscale::Report("off the tick thread (engine_calls)", aiscale::Run(a, true, a.ticks), a.period_s);
  aiscale::Report("inline, on the tick thread", aiscale::Run(a, false, a.inline_ticks), a.period_s);
  return 0;
}
