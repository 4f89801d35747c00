// capacity_at_slo_bench: the replica model's own capacity at the SLO for each real-trace example
// (the ground truth slo's capacity learner should find, issue 24 item 2), measured by the
// simulator's serving engine alone, without any policy. Two ways:
//
// - on the trace: the example's own arrivals replayed on a fixed number of ready replicas, for
//   sizes on a 15% grid from 1 to its max_replicas. Every 15 s window (the engine's metrics
//   window) goes to slo's own CapacityLearner as slo hands it over (its arrivals per second per
//   replica, its p99s, whether they may still carry a backlog, a growing queue), with nothing
//   forgotten: the capacity is the learner's `held_at` once it has seen every load, i.e. what its
//   bins converge to (a window held when its p99s were within 85% of the SLO; the learner
//   credits it to the most load over the last latency bound).
// - steady: Poisson arrivals at a rate per replica on a 4% grid, on 8 replicas, the request
//   sizes drawn from the trace (its prompts and answers, not its timing), for 31 minutes: the
//   highest rate at which most windows held at it and at every rate below, and the highest at
//   which the run attained the SLO's target. Real arrivals are burstier than Poisson, so this
//   is the higher figure.
//
// Beside them, the capacity slo's learner holds at the end of the example's own slo run. Not a
// Google Benchmark: one example is the unit.
//
//   ./build/capacity_at_slo_bench              # all four
//   ./build/capacity_at_slo_bench mooncake     # those whose file name has the word
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/numeric.h"
#include "core/state.h"
#include "decide/serving/capacity_learner.h"
#include "inference_examples.h"
#include "sim/inference/inference_spec.h"
#include "sim/inference/serving_engine.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace {

using aiscale::PersistentState;
using aiscale::decide::serving::CapacityLearner;
using aiscale::decide::serving::CapacityParams;
using aiscale::decide::serving::CapacitySample;
using aiscale::sim::inference::EngineOptions;
using aiscale::sim::inference::InferenceSpec;
using aiscale::sim::inference::ServingEngine;
using aiscale::sim::traces::TraceRequest;

constexpr int kReplicas = 8;
constexpr double kMargin = 0.15;  // CapacityParams::margin
constexpr double kWarmupS = 60;
constexpr double kSpanS = 1860;  // 120 windows after the warm-up
constexpr int64_t kSecond = 1'000'000'000;

struct Point {
  double rate = 0;  // requests/s per replica
  double held = 0;  // share of windows within (1 - margin) x SLO
  double attainment = 0;
};

// One run at `rate` per replica; sizes drawn (seeded) from `sizes`.
Point RunAt(const EngineOptions& o, const std::vector<TraceRequest>& sizes, double rate,
            double span_s) {
  ServingEngine e(o);
  for (int i = 0; i < kReplicas; ++i) e.AddReplica(0);
  std::mt19937_64 rng(17);
  std::exponential_distribution<double> gap(rate * kReplicas);
  std::uniform_int_distribution<size_t> pick(0, sizes.size() - 1);
  const int64_t window_ns = static_cast<int64_t>(o.window_s * kSecond);
  int64_t next_window = static_cast<int64_t>(kWarmupS * kSecond) + window_ns;
  int windows = 0, held = 0;
  double t_s = 0;
  auto close_windows = [&](int64_t upto) {
    for (; next_window <= upto; next_window += window_ns) {
      e.AdvanceTo(next_window);
      const double ttft = e.stats().WindowQuantile(next_window, 0.99, true);
      const double lat = e.stats().WindowQuantile(next_window, 0.99, false);
      ++windows;
      if (ttft <= (1 - kMargin) * o.slo.ttft_s && lat <= (1 - kMargin) * o.slo.latency_s) ++held;
    }
  };
  while ((t_s += gap(rng)) < span_s) {
    TraceRequest q = sizes[pick(rng)];
    q.arrival_ns = static_cast<int64_t>(t_s * kSecond);
    close_windows(q.arrival_ns - 1);
    e.Arrive(q);
  }
  close_windows(static_cast<int64_t>(span_s * kSecond));
  e.AdvanceTo(static_cast<int64_t>((span_s + 4 * o.slo.latency_s + o.queue_timeout_s) * kSecond));
  return {rate, windows ? static_cast<double>(held) / windows : 0, e.stats().Attainment()};
}

// Replays the trace on `n` ready replicas, its windows fed to `learner` as slo feeds it (the
// load per replica, the p99s, whether they may carry a backlog, a growing queue), from t0_s on.
void ReplayOn(const EngineOptions& o, const std::vector<TraceRequest>& trace, int n,
              CapacityLearner& learner, double t0_s) {
  ServingEngine e(o);
  for (int i = 0; i < n; ++i) e.AddReplica(0);
  const int64_t window_ns = static_cast<int64_t>(o.window_s * kSecond);
  const int64_t backlog_ns = static_cast<int64_t>(o.slo.latency_s * kSecond);
  int64_t next_window = window_ns;
  int64_t queue_seen = -backlog_ns - 1;
  size_t prev_queue = 0;
  auto close_windows = [&](int64_t upto) {
    for (; next_window <= upto; next_window += window_ns) {
      e.AdvanceTo(next_window);
      const size_t queue = e.queue_len();
      CapacitySample s;
      s.saturated = queue > 0 && prev_queue > 0 && queue >= prev_queue;
      s.clean = queue == 0 && next_window - queue_seen > backlog_ns;
      if (queue > 0) queue_seen = next_window;
      prev_queue = queue;
      const double rate = e.stats().ArrivalRate(next_window);
      s.load = rate / n;
      s.requests = rate * o.window_s;
      if (s.load <= 0) continue;
      const double ttft = e.stats().WindowQuantile(next_window, 0.99, true);
      const double lat = e.stats().WindowQuantile(next_window, 0.99, false);
      if (ttft > 0) s.ttft_p99_s = ttft;
      if (lat > 0) s.latency_p99_s = lat;
      learner.Observe(s, t0_s + static_cast<double>(next_window) / kSecond);
    }
  };
  for (const TraceRequest& q : trace) {
    close_windows(q.arrival_ns - 1);
    e.Arrive(q);
  }
}

// The highest load at which slo's learner, fed every size's windows and forgetting none, finds
// that the SLO held (its held_at).
double OnTheTrace(const EngineOptions& o, const std::vector<TraceRequest>& trace, int peak) {
  CapacityParams p;
  p.ttft_slo_s = o.slo.ttft_s;
  p.latency_slo_s = o.slo.latency_s;
  p.miss_share = 1 - o.slo.attainment;
  p.half_life_s = 1e15;  // every load weighs alike, whenever it was seen
  PersistentState state;
  CapacityLearner learner(p, state, "c.");
  const double span_s = trace.empty() ? 0 : static_cast<double>(trace.back().arrival_ns) / kSecond;
  double t0 = 0;
  for (double n = 1; n <= std::max(peak, 1); n = std::max(n + 1, std::round(n * 1.15))) {
    ReplayOn(o, trace, static_cast<int>(n), learner, t0);
    t0 += span_s + 86400;
  }
  CapacitySample none;
  return learner.Observe(none, t0).held_at;
}

// The capacity slo's learner holds at the end of the example's slo run (0: no slo run).
double Learned(const aiscale::sim::Scenario& s) {
  aiscale::sim::RunOptions o;
  o.policies = {"slo"};
  auto r = aiscale::sim::RunScenario(s, o);
  if (!r.ok() || r->runs.empty()) return 0;
  for (auto d = r->runs[0].decisions.rbegin(); d != r->runs[0].decisions.rend(); ++d) {
    for (const auto& [name, value] : d->recommendation.facts) {
      if (name == "capacity") return value;
    }
  }
  return 0;
}

int RunOne(const std::string& file) {
  auto s = aiscale::sim::LoadScenario(std::string(AISCALE_SOURCE_DIR) + "/" + file);
  if (!s.ok()) {
    std::printf("%s: %s\n", file.c_str(), s.status().message().c_str());
    return 1;
  }
  auto spec =
      InferenceSpec::Parse(s->workloads.at(0).node.Child("service"), s->scrape_interval_s, s->seed);
  if (!spec) return 1;
  auto stream = spec->trace->Open();
  if (!stream.ok()) return 1;
  std::vector<TraceRequest> sizes;
  while (true) {
    const size_t before = sizes.size();
    if (!(*stream)->Next(sizes, 65536).ok() || sizes.size() == before) break;
  }
  if (sizes.empty()) return 1;
  EngineOptions o = spec->engine;
  int peak = 0;
  for (const auto& w : s->workloads) peak = std::max(peak, w.spec.max_replicas);
  const double on_trace = OnTheTrace(o, sizes, peak);
  std::printf("\n%s (%zu requests' sizes, %d replicas, SLO TTFT %.0f s / latency %.0f s)\n",
              file.c_str(), sizes.size(), kReplicas, o.slo.ttft_s, o.slo.latency_s);
  std::printf("  %12s %8s %10s\n", "req/s/replica", "held", "attainment");
  // From a rate one replica surely serves upward, until the windows no longer hold.
  double rate = 0.02;
  std::vector<Point> points;
  for (int i = 0; i < 200; ++i, rate *= 1.04) {
    const Point p = RunAt(o, sizes, rate, kSpanS);
    points.push_back(p);
    if (p.held < 0.2 && p.attainment < o.slo.attainment) break;
  }
  double learnable = 0, attains = 0;
  bool broke = false;
  for (const Point& p : points) {
    broke = broke || p.held <= 0.5;
    if (!broke) learnable = p.rate;
    if (p.attainment >= o.slo.attainment) attains = p.rate;
  }
  for (const Point& p : points) {
    if (p.rate >= learnable / 1.5) {
      std::printf("  %12.4f %8.3f %10.4f\n", p.rate, p.held, p.attainment);
    }
  }
  std::printf(
      "  capacity on the trace: %.4f req/s per replica (most windows within %.0f%% of the SLO)\n"
      "  capacity steady: %.4f (most windows within %.0f%%), %.4f attaining %.2f\n",
      on_trace, 100 * (1 - kMargin), learnable, 100 * (1 - kMargin), attains, o.slo.attainment);
  const double learned = Learned(*s);
  std::printf(
      "  learned by slo at the end of the example: %.4f (%.2fx on the trace, %.2fx steady)\n",
      learned, on_trace > 0 ? learned / on_trace : 0.0, learnable > 0 ? learned / learnable : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return aiscale::bench::ForEachInferenceExample(argc, argv, RunOne);
}
