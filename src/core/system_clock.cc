#include "core/system_clock.h"

#include <thread>

namespace aiscale {
namespace {

WallTime RealWall() {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

TimePoint RealSteady() {
  return TimePoint(
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now().time_since_epoch()));
}

}  // namespace

SystemClock::SystemClock() : SystemClock(&RealWall, &RealSteady) {}

SystemClock::SystemClock(std::function<WallTime()> wall, std::function<TimePoint()> steady)
    : wall_(std::move(wall)),
      steady_(std::move(steady)),
      steady_at_anchor_(steady_()),
      wall_at_anchor_(wall_()) {}

TimePoint SystemClock::Now() const {
  return TimePoint(wall_at_anchor_.time_since_epoch() + (steady_() - steady_at_anchor_));
}

WallTime SystemClock::WallNow() const { return wall_(); }

void SystemClock::SleepUntil(TimePoint t) {
  const Duration left = t - Now();
  if (left > Duration::zero()) std::this_thread::sleep_for(left);
}

}  // namespace aiscale
