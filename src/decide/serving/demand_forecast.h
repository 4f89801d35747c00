// DemandForecast: the most demand to expect over the next `horizon` seconds, from a short
// history, with a seasonal model taking over once it has seen a season (docs/slo-policy.md).
//
// It keeps:
//  - Holt's level and trend (time constants level_s, trend_s), for where demand is heading, on
//    the demand de-noised by the median of the last three ticks (one noisy sample does not bend
//    the trend);
//  - the demand as measured, averaged over the last `absorb_s` (what a queue that may hold a
//    request for its TTFT limit evens out), over the last `peak_window_s`, for its peaks:
//    the largest over a horizon, and the k-th largest (a peak that came back k times). A burst
//    that fills one window is real demand (an on/off service is all bursts), so peaks are not
//    de-noised; a spike holds capacity up for one horizon, then lets it go;
//  - a Holt-Winters model (forecast/holt_winters.h) on 60 s buckets with a daily season
//    (optional): once it has seen one season, its forecast replaces level + trend.
// Forecast(h) = max(peak over the last h, the model's forecast for the next h): what came in
// the last h may come again, and a rising trend or a known daily ramp adds to it.
// Pure over its PersistentState (keys under `prefix`). Not thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/state.h"
#include "decide/forecast/holt_winters.h"

namespace aiscale::decide::serving {

struct DemandForecastParams {
  double level_s = 120;
  double trend_s = 900;
  double mean_s = 3600;  // the long-run mean's time constant
  // Demand is averaged over this long before its peaks count: requests may wait up to their
  // TTFT limit, so what averages out within it needs no capacity of its own (at least a tick).
  double absorb_s = 0;
  double peak_window_s = 3600;            // the longest horizon a peak is asked for
  double bucket_s = 60;                   // the seasonal model's step
  double season_s = 86400;                // 0: no season
  forecast::HoltWintersParams smoothing;  // season_buckets and score_horizon set from the above
};

class DemandForecast {
 public:
  DemandForecast(const DemandForecastParams& p, PersistentState& state, std::string_view prefix);

  // One tick's demand (>= 0) at now_s. Returns it averaged over absorb_s.
  double Observe(double demand, double now_s);
  // The most demand to expect over (now, now + horizon_s].
  double Forecast(double horizon_s, double now_s);
  // The largest absorbed demand over [now - horizon_s, now].
  double Peak(double horizon_s, double now_s) const { return Recurring(horizon_s, 1, now_s); }
  // The k-th largest tick of absorbed demand over [now - horizon_s, now] (0 when fewer ticks).
  double Recurring(double horizon_s, int k, double now_s) const;
  double level() const;
  double trend_per_s() const;
  // The demand's long-run mean (EWMA over mean_s): its typical level, on and off periods alike.
  double mean() const;
  bool seasonal();  // the seasonal model is ready and in use

 private:
  DemandForecastParams p_;
  PersistentState& state_;
  std::string last3_key_, holt_key_, mean_key_, raw_key_, recent_key_, agg_key_, hw_prefix_;
};

}  // namespace aiscale::decide::serving
