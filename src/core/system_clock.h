// SystemClock: the daemon's Clock, monotonic and anchored to wall time.
//
// Why anchored: stored times (a stabilization window's recommendations, a cooldown's last
// rescale) must mean the same seconds after a reboot or on another node. Now() is the wall
// time at construction plus the steady time elapsed since, so it is monotonic within a process
// (the steady clock) and, across processes, lands within the wall clock's accuracy of the real
// time: a TimePoint is nanoseconds since the Unix epoch. Thread-safe.
#pragma once

#include <functional>

#include "core/clock.h"

namespace aiscale {

class SystemClock final : public Clock {
 public:
  SystemClock();
  // For tests: the two raw readings (a clock that "rebooted" has a small steady reading).
  SystemClock(std::function<WallTime()> wall, std::function<TimePoint()> steady);

  TimePoint Now() const override;
  WallTime WallNow() const override;
  void SleepUntil(TimePoint t) override;

 private:
  std::function<WallTime()> wall_;
  std::function<TimePoint()> steady_;
  TimePoint steady_at_anchor_;
  WallTime wall_at_anchor_;
};

}  // namespace aiscale
