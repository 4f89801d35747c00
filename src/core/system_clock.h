// SystemClock: Clock over std::chrono::steady_clock and system_clock.
// Thread-safe; Now() is monotonic since it is the steady clock.
#pragma once

#include "core/clock.h"

namespace aiscale {

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
  WallTime WallNow() const override;
  void SleepUntil(TimePoint t) override;
};

}  // namespace aiscale
