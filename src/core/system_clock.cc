#include "core/system_clock.h"

#include <thread>

namespace aiscale {

TimePoint SystemClock::Now() const {
  return TimePoint(
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now().time_since_epoch()));
}

WallTime SystemClock::WallNow() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

void SystemClock::SleepUntil(TimePoint t) {
  const Duration left = t - Now();
  if (left > Duration::zero()) std::this_thread::sleep_for(left);
}

}  // namespace aiscale
