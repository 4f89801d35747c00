// TimeSeries: a bounded ring of (time, value) samples, oldest first.
//
// Why: windows (KPA's 60 s, HPA's stabilization, a forecaster's recent errors) all need
// "samples since t" with memory that cannot grow with uptime. Appending beyond capacity drops
// the oldest sample. Samples must be appended in non-decreasing time order; an older one is
// rejected (returns false), so a replayed or reordered scrape never corrupts a window.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/time.h"

namespace aiscale {

struct Sample {
  TimePoint at;
  double value;
};

class TimeSeries {
 public:
  explicit TimeSeries(size_t capacity = 4096);

  bool Append(TimePoint at, double value);
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  // i = 0 is the oldest retained sample.
  const Sample& at(size_t i) const { return buf_[(head_ + i) % buf_.size()]; }
  std::optional<Sample> Latest() const;
  // Mean of samples with at in (now - window, now]; nullopt when there are none.
  std::optional<double> WindowMean(TimePoint now, Duration window) const;
  std::optional<double> WindowMax(TimePoint now, Duration window) const;
  // Samples with at in (now - window, now], oldest first.
  std::vector<Sample> Window(TimePoint now, Duration window) const;
  void Clear();

 private:
  size_t capacity_;
  std::vector<Sample> buf_;  // grows to capacity_, then a ring
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace aiscale
