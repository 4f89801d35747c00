// HoltWinters: an online additive Holt-Winters forecaster (damped trend, one or two seasons)
// of a demand series sampled in fixed buckets, whose whole state lives in a PersistentState.
//
// Why this method (docs/predictive.md has the long form): request rates of inference services
// are dominated by a daily cycle (and sometimes a weekly one) on a slowly moving level.
// Exponential smoothing with seasonal indices updates in O(1) per bucket, needs no refits, keeps
// its state in a few bounded vectors, and degrades gracefully: before one full season has been
// seen it is Holt's level+trend method; `season_buckets = 0` makes it that for good. The second
// (long, e.g. weekly) season follows Taylor (2003, "double seasonal exponential smoothing"),
// kept at a coarser slot (e.g. 1 h) so a week costs 168 numbers, not 10080.
// Additive rather than multiplicative so that zero-demand buckets are ordinary data.
//
// Promises: Observe() is O(1) amortized (a gap of g buckets costs O(min(g, season))), Forecast()
// is O(1); forecasts are never negative. The object is a view: it reads and writes the vectors
// under `prefix` in the PersistentState it was given, which must outlive it.
//
//   forecast::HoltWinters hw(params, state, "hw.");
//   hw.Observe(bucket_index, mean_rate_in_bucket);
//   double f = hw.Forecast(bucket_index + 5);  // five buckets ahead
//
// Not thread-safe (it mutates the state it views).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/state.h"

namespace aiscale::decide::forecast {

struct HoltWintersParams {
  double alpha = 0.1;         // level smoothing, per bucket
  double beta = 0.005;        // trend smoothing, per bucket
  double phi = 0.995;         // trend damping per bucket (1 = undamped); keeps far forecasts sane
  double gamma = 0.3;         // seasonal smoothing, per season (shared by the kernel slots)
  double omega = 0.1;         // long-season smoothing, per visit of a long slot's worth of buckets
  int season_buckets = 1440;  // 0: no season (Holt's linear method)
  // Half-width, in slots, of the triangular kernel that spreads each seasonal update over
  // neighbouring slots (and smooths the first season). One bucket of one day is a noisy
  // estimate of that minute's seasonal index; demand shapes are smooth at minute scale.
  int season_kernel = 5;
  int long_season_slots = 0;   // 0: no long season; e.g. 168 for a week of 1 h slots
  int long_slot_buckets = 60;  // buckets per long-season slot
  // Horizon (buckets) at which the seasonal model and a shadow level+trend model (same alpha,
  // beta, phi) are both scored; Forecast() then weights them by inverse mean squared error at
  // that horizon. 0: no shadow, the seasonal model alone once it is ready. This is what makes a
  // wrong or absent `season` cost little: the weights move to level+trend.
  int score_horizon = 0;
  double score_decay = 0.005;  // EWMA weight of each new squared error (~200 buckets)
};

// Largest season accepted, in buckets, so the state stays bounded (two weeks of minutes).
inline constexpr int kMaxSeasonBuckets = 20160;

class HoltWinters {
 public:
  HoltWinters(const HoltWintersParams& params, PersistentState& state, const std::string& prefix);

  // Feeds bucket `index` (absolute, increasing) with value `y` (>= 0 expected). Buckets skipped
  // since the last call are imputed with the model's own one-step forecast (no information),
  // up to one season; a longer gap keeps level and seasons but forgets the trend. An index not
  // after the last observed one is ignored (returns false).
  bool Observe(int64_t index, double y);

  // Forecast of bucket `index` (normally > last_index(); nearer ones count as one step ahead).
  // 0 before any observation; never negative. With score_horizon > 0 and the season ready,
  // the inverse-MSE weighted mean of SeasonalForecast() and TrendForecast().
  double Forecast(int64_t index) const;
  double SeasonalForecast(int64_t index) const;  // the Holt-Winters model alone
  double TrendForecast(int64_t index) const;     // the shadow level+trend model alone
  // Weight of the seasonal model in Forecast(), 0..1.
  double seasonal_weight() const;

  // Buckets observed (imputed ones included) since the state was created.
  int64_t observed() const;
  int64_t last_index() const;
  bool seasonal_ready() const;  // one full season seen: forecasts use seasonal indices
  double level() const;
  double trend() const;

 private:
  double Seasonal(int64_t index) const;
  double LongSeasonal(int64_t index) const;
  void Update(int64_t index, double y, bool real);
  void Score(int64_t index, double y);
  void InitSeasonFromWarmup();
  std::vector<double> Kernel() const;          // 2k+1 weights summing to 1
  const std::vector<double>& KernelWeights();  // Kernel(), made once per instance

  HoltWintersParams p_;
  std::vector<double> kernel_;  // empty until KernelWeights()
  // scalars_: [0] level, [1] trend, [2] observed count, [3] last index, [4] buckets seen since
  // the season was (re)started (ready at season_buckets), [5] shadow level, [6] shadow trend,
  // [7] seasonal MSE, [8] shadow MSE, [9] forecasts scored since the season became ready.
  std::vector<double>& scalars_;
  std::vector<double>& season_;       // season_buckets values (raw values during warm-up)
  std::vector<double>& long_season_;  // long_season_slots values
  std::vector<double>& pending_;      // (score_horizon + 1) x [target, seasonal, shadow]
};

}  // namespace aiscale::decide::forecast
