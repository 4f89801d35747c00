#include "sim/inference/request_stats.h"

#include <algorithm>
#include <cmath>

#include "core/numeric.h"

namespace aiscale::sim::inference {
namespace {
constexpr int64_t kSecond = 1'000'000'000;
}

RequestStats::RequestStats(Slo slo, int64_t window_ns)
    : slo_(slo),
      slo_ttft_ns_(SaturatingNanos(slo.ttft_s)),
      slo_latency_ns_(SaturatingNanos(slo.latency_s)),
      window_ns_(std::max<int64_t>(window_ns, kSecond)),
      ring_(static_cast<size_t>(window_ns_ / kSecond) + 2) {}

RequestStats::Bucket& RequestStats::BucketAt(int64_t t_ns) {
  const int64_t sec = t_ns / kSecond;
  Bucket& b = ring_[static_cast<size_t>(sec) % ring_.size()];
  if (b.second != sec) b = Bucket{sec, 0, 0};
  return b;
}

void RequestStats::OnArrival(int64_t t_ns) {
  ++arrived_;
  ++BucketAt(t_ns).arrivals;
}

void RequestStats::OnTokens(int64_t t_ns, uint64_t tokens) { BucketAt(t_ns).tokens += tokens; }

void RequestStats::Prune(std::deque<Sample>& d, int64_t now_ns) const {
  const int64_t keep = std::max(window_ns_, retention_ns_);
  while (!d.empty() && d.front().t_ns <= now_ns - keep) d.pop_front();
}

void RequestStats::OnFirstToken(int64_t now_ns, int64_t first_ns, int64_t ttft_ns) {
  // Replicas step on their own clocks: a first token due sooner than one already recorded
  // goes in its place.
  auto at = first_tokens_.end();
  while (at != first_tokens_.begin() && std::prev(at)->t_ns > first_ns) --at;
  first_tokens_.insert(at, Sample{first_ns, static_cast<float>(ttft_ns / 1e9)});
  Prune(first_tokens_, now_ns);
}

void RequestStats::OnComplete(int64_t t_ns, int64_t latency_ns, int64_t ttft_ns) {
  ++completed_;
  if (latency_ns <= slo_latency_ns_ && ttft_ns <= slo_ttft_ns_) ++within_slo_;
  latency_.Add(latency_ns);
  ttft_.Add(ttft_ns);
  latencies_.push_back(Sample{t_ns, static_cast<float>(latency_ns / 1e9)});
  Prune(latencies_, t_ns);
}

double RequestStats::Attainment() const {
  return arrived_ ? static_cast<double>(within_slo_) / static_cast<double>(arrived_) : 1.0;
}

double RequestStats::WindowSum(int64_t now_ns, bool tokens) const {
  // Whole seconds [now - window, now): the seconds that have fully elapsed.
  const int64_t end = now_ns / kSecond;
  const int64_t n = window_ns_ / kSecond;
  uint64_t sum = 0;
  for (int64_t s = end - n; s < end; ++s) {
    if (s < 0) continue;
    const Bucket& b = ring_[static_cast<size_t>(s) % ring_.size()];
    if (b.second == s) sum += tokens ? b.tokens : b.arrivals;
  }
  return static_cast<double>(sum) / static_cast<double>(n);
}

double RequestStats::ArrivalRate(int64_t now_ns) const { return WindowSum(now_ns, false); }
double RequestStats::TokenRate(int64_t now_ns) const { return WindowSum(now_ns, true); }

double RequestStats::WindowQuantile(int64_t now_ns, double q, bool ttft) const {
  return QuantileBetween(now_ns - window_ns_, now_ns, q, ttft);
}

double RequestStats::QuantileBetween(int64_t from_ns, int64_t to_ns, double q, bool ttft) const {
  scratch_.clear();
  const std::deque<Sample>& d = ttft ? first_tokens_ : latencies_;
  for (auto it = d.rbegin(); it != d.rend() && it->t_ns > from_ns; ++it) {
    if (it->t_ns <= to_ns) scratch_.push_back(it->s);
  }
  if (scratch_.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(scratch_.size())));
  const size_t k = std::clamp<size_t>(rank, 1, scratch_.size()) - 1;
  std::nth_element(scratch_.begin(), scratch_.begin() + static_cast<long>(k), scratch_.end());
  return scratch_[k];
}

}  // namespace aiscale::sim::inference
