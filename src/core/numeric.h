// Checked numeric conversions: the one place where a parsed double becomes an integer, a count
// or integer nanoseconds.
//
// Why: a double cast to an integer type outside that type's range is undefined behaviour (on
// x86 it yields INT_MIN, so a need of 1e12 replicas became 1), and seconds * 1e9 past
// ~9.2e9 s wraps int64 nanoseconds. Every conversion here either saturates (NaN to a stated
// value, +/-inf and out-of-range to the nearest bound) or, in the Checked* forms, says why the
// value cannot be represented. Pure functions; safe from any thread.
//
//   Duration d = SaturatingSeconds(1e10);          // Duration::max(), not a wrapped value
//   int n = ClampToInt(need, 0, kMaxReplicaCount); // a huge need saturates at the bound
//   auto ns = CheckedNanos(s);                     // Result: error text names the limit
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <string_view>

#include "core/result.h"

namespace aiscale {

// The largest number of replicas (nodes, pods, workers) any workload, cluster or policy output
// may name. Policies saturate here before converting to int, so arithmetic that follows
// (rounding to a granularity, current + step) cannot overflow; constraints then clamp to
// the workload's own [min, max].
inline constexpr int kMaxReplicaCount = 1'000'000;

// int64 nanoseconds cover about +/-292 years; configs are bounded well inside that
// (docs/limits.md: durations at most 100 years).
inline constexpr double kMaxRepresentableSeconds = 9.2e9;

// A double's value clamped into [lo, hi]; NaN yields `nan_value`. Never undefined behaviour.
constexpr double ClampDouble(double v, double lo, double hi, double nan_value) {
  if (v != v) return nan_value;  // NaN (std::isnan is not constexpr in C++20)
  if (v < lo) return lo;
  if (v > hi) return hi;
  return v;
}

// v truncated toward zero and saturated to [lo, hi]; NaN yields lo.
constexpr int64_t SaturatingToInt64(double v, int64_t lo = std::numeric_limits<int64_t>::min(),
                                    int64_t hi = std::numeric_limits<int64_t>::max()) {
  if (v != v) return lo;
  // 2^63 is exactly representable; anything at or above it is out of range.
  if (v >= 9223372036854775808.0 || v >= static_cast<double>(hi)) return hi;
  if (v < -9223372036854775808.0 || v <= static_cast<double>(lo)) return lo;
  const int64_t i = static_cast<int64_t>(v);
  return i < lo ? lo : (i > hi ? hi : i);
}

// v truncated toward zero and saturated to [lo, hi]; NaN yields lo.
constexpr int ClampToInt(double v, int lo, int hi) {
  return static_cast<int>(SaturatingToInt64(v, lo, hi));
}

// ceil(v) saturated to [lo, hi]; NaN yields lo.
int CeilToInt(double v, int lo, int hi);

// A replica count from a policy's real-valued need: ceil(v - tolerance) saturated to
// [0, kMaxReplicaCount]; NaN yields 0 (no evidence of need).
int ReplicaCountCeil(double v, double tolerance = 1e-9);

// Seconds to integer nanoseconds, truncated toward zero (as the casts it replaces did, so
// runs stay byte-identical), saturated to the int64 range; NaN yields 0.
constexpr int64_t SaturatingNanos(double seconds) {
  if (seconds != seconds) return 0;
  return SaturatingToInt64(seconds * 1e9);
}
constexpr std::chrono::nanoseconds SaturatingSeconds(double seconds) {
  return std::chrono::nanoseconds(SaturatingNanos(seconds));
}

// Seconds to nanoseconds, or an error naming `what` when the value is NaN, infinite or
// outside +/-kMaxRepresentableSeconds.
Result<int64_t> CheckedNanos(double seconds, std::string_view what = "duration");

// Integer arithmetic that saturates instead of wrapping.
int64_t SaturatingAdd(int64_t a, int64_t b);
int64_t SaturatingMul(int64_t a, int64_t b);
// a * b, or nullopt-like failure: false when the product overflows int64.
bool CheckedMul(int64_t a, int64_t b, int64_t* out);
bool CheckedAdd(int64_t a, int64_t b, int64_t* out);

}  // namespace aiscale
