#include "core/time.h"

#include <cstdio>
#include <ctime>

namespace aiscale {

std::string FormatWallTime(WallTime t) {
  const auto since = t.time_since_epoch();
  if (since.count() == 0) return "";
  const auto secs = std::chrono::floor<std::chrono::seconds>(since);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since - secs).count();
  const std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  if (!gmtime_r(&tt, &tm)) return "";
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(millis));
  return std::string(buf, n) + frac;
}

}  // namespace aiscale
