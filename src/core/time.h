// Time types shared by every layer.
//
// TimePoint is monotonic time in integer nanoseconds (a SimClock's virtual time or the steady
// clock). Wall time is a separate type so the two are never mixed by accident.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

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

inline constexpr Duration Seconds(double s) { return Duration(static_cast<int64_t>(s * 1e9)); }
inline constexpr double ToSeconds(Duration d) { return static_cast<double>(d.count()) / 1e9; }
inline constexpr TimePoint AtSeconds(double s) { return TimePoint(Seconds(s)); }
inline constexpr double SinceEpochSeconds(TimePoint t) { return ToSeconds(t.time_since_epoch()); }

// ISO 8601 UTC with milliseconds ("2026-12-03T05:30:08.123Z"); empty for the epoch (unset).
std::string FormatWallTime(WallTime t);

}  // namespace aiscale
