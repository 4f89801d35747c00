// Clock: the one source of time for the controller, sources and actuators.
//
// Why: policies never read a clock; everything else gets `Clock&` injected, so the same code
// runs on wall time (SystemClock) and on the simulator's virtual time (sim::SimClock).
// Contract: Now() never goes backwards; all methods are thread-safe.
//
//   void Loop(Clock& clock) { auto next = clock.Now(); for (;;) { Tick(); clock.SleepUntil(next +=
//   period); } }
#pragma once

#include "core/time.h"

namespace aiscale {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time; the basis of every window, cooldown and staleness check.
  virtual TimePoint Now() const = 0;
  // Wall time, for records shown to people only.
  virtual WallTime WallNow() const = 0;
  // Blocks (SystemClock) or advances virtual time (SimClock) until Now() >= t.
  virtual void SleepUntil(TimePoint t) = 0;
};

}  // namespace aiscale
