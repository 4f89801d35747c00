#include "core/time_series.h"

#include <algorithm>

namespace aiscale {

TimeSeries::TimeSeries(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

bool TimeSeries::Append(TimePoint at, double value) {
  if (size_ > 0 && at < this->at(size_ - 1).at) return false;
  if (buf_.size() < capacity_) {
    // Grows as samples arrive (head_ stays 0 until the ring is full), so ten thousand
    // workloads with short histories do not each hold capacity samples from the start.
    buf_.push_back({at, value});
    ++size_;
  } else if (size_ < buf_.size()) {
    buf_[(head_ + size_) % buf_.size()] = {at, value};
    ++size_;
  } else {
    buf_[head_] = {at, value};
    head_ = (head_ + 1) % buf_.size();
  }
  return true;
}

std::optional<Sample> TimeSeries::Latest() const {
  if (size_ == 0) return std::nullopt;
  return at(size_ - 1);
}

std::vector<Sample> TimeSeries::Window(TimePoint now, Duration window) const {
  std::vector<Sample> out;
  const TimePoint from = now - window;
  // Walk back from the newest; samples are time-ordered.
  size_t first = size_;
  while (first > 0 && at(first - 1).at > from) --first;
  for (size_t i = first; i < size_; ++i) {
    if (at(i).at <= now) out.push_back(at(i));
  }
  return out;
}

std::optional<double> TimeSeries::WindowMean(TimePoint now, Duration window) const {
  const auto w = Window(now, window);
  if (w.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& s : w) sum += s.value;
  return sum / static_cast<double>(w.size());
}

std::optional<double> TimeSeries::WindowMax(TimePoint now, Duration window) const {
  const auto w = Window(now, window);
  if (w.empty()) return std::nullopt;
  double m = w.front().value;
  for (const auto& s : w) m = std::max(m, s.value);
  return m;
}

void TimeSeries::Clear() {
  buf_.clear();
  head_ = 0;
  size_ = 0;
}

}  // namespace aiscale
