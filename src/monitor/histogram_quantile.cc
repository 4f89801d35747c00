#include "monitor/histogram_quantile.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aiscale::monitor {
namespace {

constexpr double kNoQuantile = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Merges buckets with the same upper bound (input sorted), adding their counts.
void Coalesce(std::vector<Bucket>& b) {
  size_t out = 0;
  for (size_t i = 1; i < b.size(); ++i) {
    if (b[i].upper_bound == b[out].upper_bound) {
      b[out].count += b[i].count;
    } else {
      b[++out] = b[i];
    }
  }
  b.resize(out + 1);
}

// Relative differences below `tolerance` between neighbours are float noise, not data.
void SmoothPrecisionErrors(std::vector<Bucket>& b, double tolerance) {
  double prev = b[0].count;
  for (size_t i = 1; i < b.size(); ++i) {
    const double delta = std::abs(b[i].count - prev);
    if (delta == 0) continue;
    if (delta / b[i].count <= tolerance) {
      b[i].count = prev;
    } else {
      prev = b[i].count;
    }
  }
}

// Cumulative counts can only grow with the bound; a dip (inconsistent exposer, or a bucket
// reset between two scrapes) is flattened to the running maximum.
void EnsureMonotonic(std::vector<Bucket>& b) {
  double max = b[0].count;
  for (size_t i = 1; i < b.size(); ++i) {
    max = std::max(max, b[i].count);
    b[i].count = max;
  }
}

}  // namespace

double HistogramQuantile(double q, std::vector<Bucket> buckets) {
  if (std::isnan(q)) return kNoQuantile;
  if (q < 0) return -kInf;
  if (q > 1) return kInf;
  if (buckets.empty()) return kNoQuantile;
  std::sort(buckets.begin(), buckets.end(),
            [](const Bucket& a, const Bucket& b) { return a.upper_bound < b.upper_bound; });
  if (buckets.back().upper_bound != kInf) return kNoQuantile;
  Coalesce(buckets);
  SmoothPrecisionErrors(buckets, 1e-12);
  EnsureMonotonic(buckets);
  if (buckets.size() < 2) return kNoQuantile;
  const double observations = buckets.back().count;
  if (!(observations > 0)) return kNoQuantile;
  double rank = q * observations;
  // First bucket (excluding +Inf) whose cumulative count reaches the rank.
  size_t b = 0;
  while (b < buckets.size() - 1 && buckets[b].count < rank) ++b;
  if (b == buckets.size() - 1) return buckets[b - 1].upper_bound;
  if (b == 0 && buckets[0].upper_bound <= 0) return buckets[0].upper_bound;
  double start = 0;
  double count = buckets[b].count;
  if (b > 0) {
    start = buckets[b - 1].upper_bound;
    count -= buckets[b - 1].count;
    rank -= buckets[b - 1].count;
  }
  return start + (buckets[b].upper_bound - start) * (rank / count);
}

double CounterIncrease(std::span<const double> values) {
  double increase = 0;
  double prev = kNoQuantile;
  int readings = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    if (readings > 0) increase += v >= prev ? v - prev : v;
    prev = v;
    ++readings;
  }
  return readings >= 2 ? increase : kNoQuantile;
}

}  // namespace aiscale::monitor
