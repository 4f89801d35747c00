// LatencyHistogram: log-linear buckets over nanoseconds (128 sub-buckets per power of two,
// so a reported quantile is within 0.8% of the true value), constant memory (64 KiB).
//
// Why: p50/p99 over 10 M requests without keeping 10 M values. SLO attainment is counted
// exactly elsewhere; this is only for quantiles. Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace aiscale::sim::inference {

class LatencyHistogram {
 public:
  void Add(int64_t ns);
  uint64_t count() const { return count_; }
  // Quantile q in [0, 1] in seconds (bucket midpoint); 0 when empty.
  double QuantileSeconds(double q) const;
  double MeanSeconds() const { return count_ ? sum_s_ / static_cast<double>(count_) : 0; }

 private:
  static constexpr int kSubBits = 7;
  static constexpr int kSub = 1 << kSubBits;
  static size_t Bucket(uint64_t v);
  static double BucketMid(size_t b);
  std::array<uint64_t, 64 * kSub> counts_{};
  uint64_t count_ = 0;
  double sum_s_ = 0;
};

}  // namespace aiscale::sim::inference
