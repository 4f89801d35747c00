#include "core/numeric.h"

#include <cmath>
#include <sstream>

namespace aiscale {

int CeilToInt(double v, int lo, int hi) {
  if (std::isnan(v)) return lo;
  return ClampToInt(std::ceil(ClampDouble(v, lo, hi, lo)), lo, hi);
}

int ReplicaCountCeil(double v, double tolerance) {
  if (std::isnan(v)) return 0;
  return CeilToInt(v - tolerance, 0, kMaxReplicaCount);
}

Result<int64_t> CheckedNanos(double seconds, std::string_view what) {
  if (!std::isfinite(seconds) || std::abs(seconds) > kMaxRepresentableSeconds) {
    std::ostringstream os;
    os << what << " " << seconds << " s is not representable in int64 nanoseconds (at most "
       << kMaxRepresentableSeconds << " s)";
    return Status::Invalid(os.str());
  }
  return SaturatingNanos(seconds);
}

bool CheckedAdd(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool CheckedMul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (CheckedAdd(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (CheckedMul(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

}  // namespace aiscale
