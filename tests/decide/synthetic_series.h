// Deterministic synthetic demand for forecaster and predictive-policy tests.
//
// Why: std::normal_distribution is implementation-defined, so tests that assert measured
// errors use this Box-Muller over std::mt19937 (whose output sequence the standard fixes).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace aiscale::testing {

class Noise {
 public:
  explicit Noise(uint32_t seed) : gen_(seed) {}
  // Standard normal draw.
  double Normal() {
    const double u1 = (static_cast<double>(gen_()) + 0.5) / 4294967296.0;
    const double u2 = (static_cast<double>(gen_()) + 0.5) / 4294967296.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  std::mt19937 gen_;
};

// level + trend * t + amplitude * sin(2 pi t / period), t in any unit.
inline double Sinusoid(double t, double level, double amplitude, double period, double trend = 0) {
  return level + trend * t + amplitude * std::sin(2 * std::numbers::pi * t / period);
}

// A daily ramp from `low` at midnight to `high` at noon and back, t in seconds.
inline double DailyRamp(double t_s, double low, double high) {
  return low + (high - low) * 0.5 * (1 - std::cos(2 * std::numbers::pi * t_s / 86400));
}

// An office day, t in seconds: night at 20/s, a one-hour ramp to 400/s from 8:00, back down
// from 17:00 to 18:00.
inline double OfficeDay(double t_s) {
  const double m = std::fmod(t_s, 86400) / 60, lo = 20, hi = 400;
  if (m < 480) return lo;
  if (m < 540) return lo + (hi - lo) * (m - 480) / 60;
  if (m < 1020) return hi;
  if (m < 1080) return hi - (hi - lo) * (m - 1020) / 60;
  return lo;
}

}  // namespace aiscale::testing
