// A month of 15 s ticks (172,800) through the predictive policy with a daily and a weekly
// season, as the Controller drives it: ingest the tick's request_rate, recommend, apply. The
// time per tick is the policy's own (Holt-Winters update, error quantile, forecast); it was a
// timed assertion in tests/decide/predictive_test.cc (< 10 s a month), which belongs here.
//
//   ./build/predictive_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/signal.h"
#include "core/workload_signals.h"
#include "decide/policies/predictive.h"
#include "decide/synthetic_series.h"  // tests/decide: the demand curve of predictive_test

namespace aiscale::decide {
namespace {

constexpr double kDayS = 86400;
constexpr double kTick = 15;

void BM_PredictiveMonth(benchmark::State& state) {
  WorkloadContext ctx;
  ctx.min_replicas = 1;
  ctx.max_replicas = 1000;
  ctx.control_period_s = kTick;
  ctx.cold_start_s = 585;
  config::ConfigErrors errs;
  const config::ConfigNode root = config::ParseConfig(
      "name: predictive\ncapacity_per_replica: 10\nlong_season: 7d\n", "bench.yaml", errs);
  const PredictiveConfig cfg = PredictivePolicy::Parse(root, ctx);
  if (!errs.empty()) {
    state.SkipWithError(errs.ToStatus().message().c_str());
    return;
  }
  int64_t ticks = 0;
  for (auto _ : state) {
    const PredictivePolicy policy(cfg);
    WorkloadSignals signals;
    PersistentState persisted;
    int current = 1;
    for (double t = 0; t < 30 * kDayS; t += kTick) {
      const std::vector<Observation> obs = {
          {"request_rate", "", aiscale::testing::OfficeDay(t), AtSeconds(t), true}};
      signals.Ingest(signals::kRequestRate, obs, AtSeconds(t), Seconds(45));
      const PolicyInput in{signals,      current,      current,      AtSeconds(t),
                           std::nullopt, std::nullopt, std::nullopt, 0};
      const Recommendation r = policy.Recommend(in, persisted);
      if (r.valid) current = r.desired;
      ++ticks;
    }
    benchmark::DoNotOptimize(current);
  }
  state.counters["us_per_tick"] = benchmark::Counter(
      static_cast<double>(ticks), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_PredictiveMonth)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace aiscale::decide

BENCHMARK_MAIN();
