// Time types shared by every layer.
//
// TimePoint is monotonic time in integer nanoseconds (a SimClock's virtual time or the steady
// clock). Wall time is a separate type so the two are never mixed by accident.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/numeric.h"

namespace aiscale {

using Duration = std::chrono::nanoseconds;

// The epoch of a TimePoint is the Unix epoch for SystemClock (wall-anchored, so stored times
// survive a restart) and the scenario's start for SimClock.
struct MonoEpoch {
  using duration = Duration;
  using rep = Duration::rep;
  using period = Duration::period;
  using time_point = std::chrono::time_point<MonoEpoch, Duration>;
  static constexpr bool is_steady = true;
};
using TimePoint = MonoEpoch::time_point;
using WallTime = std::chrono::time_point<std::chrono::system_clock, Duration>;

// Saturates (core/numeric.h): seconds past the int64-nanosecond range become the largest
// Duration instead of wrapping; NaN becomes 0.
inline constexpr Duration Seconds(double s) { return SaturatingSeconds(s); }
inline constexpr double ToSeconds(Duration d) { return static_cast<double>(d.count()) / 1e9; }
inline constexpr TimePoint AtSeconds(double s) { return TimePoint(Seconds(s)); }
inline constexpr double SinceEpochSeconds(TimePoint t) { return ToSeconds(t.time_since_epoch()); }
// t + d, saturated at TimePoint::min()/max() instead of wrapping (a saturated "never" plus now
// must stay "never", not become the past).
inline TimePoint AddSaturating(TimePoint t, Duration d) {
  return TimePoint(Duration(SaturatingAdd(t.time_since_epoch().count(), d.count())));
}

// ISO 8601 UTC with milliseconds ("2026-12-03T05:30:08.123Z"); empty for the epoch (unset).
std::string FormatWallTime(WallTime t);

}  // namespace aiscale
