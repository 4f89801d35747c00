// Headroom: how far above its forecast the demand has risen within one lead time, learned from
// the workload's own history, so a bursty service keeps standing headroom and a smooth one does
// not (docs/slo-policy.md).
//
// At the start of every bucket (60 s) the forecast F of the most demand over the next lead time
// is remembered; when the lead has passed, the most demand actually seen over it scores it:
// (actual - F) / sqrt(max(F, floor)). Arrival counts vary about as the square root of their
// mean, so this one scale fits the trough and the peak of a daily cycle alike; the floor (the
// demand's long-run mean, or one replica's worth) keeps a near-zero forecast in an off period of
// an on/off service from making every miss enormous, and keeps its headroom standing there.
// The headroom to add to a forecast F is q x sqrt(max(F, floor)), q the `quantile` of the last
// `window` scores (forecast/error_quantile.h), blended with `prior` while there are few of them:
// (n x learned + k x prior) / (n + k), k = prior_weight. Never negative; nothing is scored
// before `warmup_s` (a forecast with no history is not the forecaster's error).
// Pure over its PersistentState (keys under `prefix`). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/state.h"
#include "decide/forecast/error_quantile.h"

namespace aiscale::decide::serving {

struct HeadroomParams {
  double bucket_s = 60;
  double window_s = 86400;
  double quantile = 0.95;
  double prior = 1;          // the score quantile before anything is learned (sqrt units)
  double prior_weight = 20;  // worth this many scored buckets
  double warmup_s = 0;
};

class Headroom {
 public:
  Headroom(const HeadroomParams& p, PersistentState& state, std::string_view prefix);
  // One tick: the demand now, the forecast of the most demand over the next
  // `lead_s`, made now, and the floor (see above). Returns the headroom to
  // add to `forecast`, in demand units.
  double Observe(double demand, double forecast, double lead_s, double floor, double now_s);
  // The score quantile (blended with the prior) and the headroom it gives over `forecast`.
  double Score() const;
  double For(double forecast, double floor) const;
  size_t scored() const;

 private:
  HeadroomParams p_;
  forecast::ErrorQuantileParams eq_params_;
  PersistentState& state_;
  std::string prefix_, agg_key_, peaks_key_, first_key_, pending_key_;
};

}  // namespace aiscale::decide::serving
