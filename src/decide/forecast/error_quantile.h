// ErrorQuantile: a safety margin learned from a forecaster's own recent errors at one lead.
//
// Why: a constant head-room is either wasteful or unsafe depending on the trace; the spread of
// the forecaster's past misses at the horizon we act on is the honest measure. Forecasts are
// recorded for a target bucket when made; when that bucket's actual value arrives the signed
// miss (actual - forecast, relative to the forecast or absolute) joins a bounded window of the
// last `window` errors, and the margin is an upper quantile of that window.
//
// Promises: memory is bounded by `window` + `pending`; RecordActual() is O(log window) plus a
// memmove of at most `window` doubles (a sorted copy is kept), Quantile() and Margin() are O(1).
// The margin is never negative: an over-forecasting model does not earn a discount. Like
// HoltWinters it is a view over the PersistentState vectors under `prefix`.
//
//   forecast::ErrorQuantile eq(params, state, "err.");
//   eq.RecordActual(bucket, actual);          // scores the forecast made for `bucket`, if any
//   eq.RecordForecast(bucket + h, forecast);  // to be scored h buckets from now
//   double m = eq.Margin(f);                  // add to the forecast f before sizing
//
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/state.h"

namespace aiscale::decide::forecast {

enum class ErrorMode {
  // (actual - forecast) / max(forecast, relative_floor); margin = q * forecast. Suits a demand
  // whose noise grows with its level (a daily cycle): the margin shrinks at the trough.
  kRelative,
  // actual - forecast, in the series' units; margin = q.
  kAbsolute,
};

struct ErrorQuantileParams {
  size_t window = 1440;    // errors kept (e.g. one day of 60 s buckets)
  double quantile = 0.95;  // 0..1
  ErrorMode mode = ErrorMode::kRelative;
  double relative_floor = 1;  // denominator floor for relative errors (series units)
  size_t pending = 16;        // forecasts awaiting their actual (> the horizon in buckets)
};

class ErrorQuantile {
 public:
  ErrorQuantile(const ErrorQuantileParams& params, PersistentState& state,
                const std::string& prefix);

  // Remembers `forecast` for bucket `target`, replacing an older pending one for the same slot.
  void RecordForecast(int64_t target, double forecast);
  // If a forecast for `index` is pending, scores it against `actual`; true when one was.
  bool RecordActual(int64_t index, double actual);
  // Adds one error directly (already in the mode's units).
  void AddError(double error);

  size_t count() const;
  // The params' quantile of the retained errors (linear between order statistics); 0 if none.
  double Quantile() const;
  // Head-room to add to forecast `f`, in series units, >= 0.
  double Margin(double f) const;

 private:
  ErrorQuantileParams p_;
  std::vector<double>& ring_;     // errors in arrival order (circular once full)
  std::vector<double>& sorted_;   // the same errors, ascending
  std::vector<double>& meta_;     // [0] ring head (oldest when full)
  std::vector<double>& pending_;  // 2 * pending: target index, forecast
};

}  // namespace aiscale::decide::forecast
