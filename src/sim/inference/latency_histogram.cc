#include "sim/inference/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace aiscale::sim::inference {

size_t LatencyHistogram::Bucket(uint64_t v) {
  if (v < kSub) return static_cast<size_t>(v);  // exact below 128 ns
  const int msb = 63 - std::countl_zero(v);
  const int shift = msb - kSubBits;
  const uint64_t sub = (v >> shift) & (kSub - 1);
  return static_cast<size_t>((shift + 1) * kSub + sub);
}

double LatencyHistogram::BucketMid(size_t b) {
  if (b < kSub) return static_cast<double>(b);
  const int shift = static_cast<int>(b / kSub) - 1;
  const uint64_t sub = b % kSub;
  const double lo = std::ldexp(static_cast<double>(kSub + sub), shift);
  const double width = std::ldexp(1.0, shift);
  return lo + width / 2;
}

void LatencyHistogram::Add(int64_t ns) {
  const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
  ++counts_[Bucket(v)];
  ++count_;
  sum_s_ += static_cast<double>(v) / 1e9;
}

double LatencyHistogram::QuantileSeconds(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // The smallest value with at least ceil(q * n) values at or below it (nearest rank).
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * count_)));
  uint64_t seen = 0;
  for (size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= rank) return BucketMid(b) / 1e9;
  }
  return BucketMid(counts_.size() - 1) / 1e9;
}

}  // namespace aiscale::sim::inference
