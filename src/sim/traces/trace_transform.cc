#include "sim/traces/trace_transform.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "core/numeric.h"

namespace aiscale::sim::traces {
namespace {

class TransformedStream final : public RequestStream {
 public:
  TransformedStream(std::unique_ptr<RequestStream> inner, const TransformOptions& o)
      : inner_(std::move(inner)), o_(o), rng_(o.seed) {
    start_ns_ = SaturatingNanos(o.start_s);
    end_ns_ =
        o.duration_s > 0 ? SaturatingAdd(start_ns_, SaturatingNanos(o.duration_s)) : INT64_MAX;
    jitter_ns_ = SaturatingNanos(o.jitter_s / o.time_compression);
    whole_ = ClampToInt(std::floor(o.rate_multiplier), 0, 1'000'000);
    frac_ = o.rate_multiplier - whole_;
  }

  Status Next(std::vector<TraceRequest>& out, size_t max) override {
    const size_t target = out.size() + max;
    while (out.size() < target) {
      if (!pending_.empty()) {
        const size_t take = std::min(pending_.size() - pending_pos_, target - out.size());
        out.insert(out.end(), pending_.begin() + pending_pos_,
                   pending_.begin() + pending_pos_ + take);
        pending_pos_ += take;
        if (pending_pos_ == pending_.size()) {
          pending_.clear();
          pending_pos_ = 0;
        }
        continue;
      }
      TraceRequest cur;
      if (!Pull(cur)) break;
      if (!status_.ok()) return status_;
      TraceRequest next;
      const bool has_next = Peek(next);
      if (!status_.ok()) return status_;
      Expand(cur, has_next ? next.arrival_ns - cur.arrival_ns : jitter_ns_);
    }
    return status_;
  }

 private:
  // Next windowed, compressed original request; false at the end.
  bool Pull(TraceRequest& r) {
    if (!Peek(r)) return false;
    ++pos_;
    return true;
  }
  bool Peek(TraceRequest& r) {
    while (true) {
      if (pos_ < buf_.size()) {
        const TraceRequest& raw = buf_[pos_];
        if (raw.arrival_ns >= end_ns_) return false;
        if (raw.arrival_ns < start_ns_) {
          ++pos_;
          continue;
        }
        r = raw;
        // Compressing by < 1 stretches time: saturate rather than wrap past int64.
        r.arrival_ns = SaturatingToInt64(static_cast<double>(raw.arrival_ns - start_ns_) /
                                         o_.time_compression);
        return true;
      }
      if (inner_done_) return false;
      buf_.clear();
      pos_ = 0;
      status_ = inner_->Next(buf_, 4096);
      if (!status_.ok() || buf_.empty()) {
        inner_done_ = true;
        return false;
      }
    }
  }
  void Expand(const TraceRequest& r, int64_t gap_ns) {
    if (o_.rate_multiplier < 1) {
      if (uniform_(rng_) < o_.rate_multiplier) pending_.push_back(r);
      return;
    }
    int copies = whole_ + (uniform_(rng_) < frac_ ? 1 : 0);
    if (copies == 0) return;
    pending_.push_back(r);
    const double spread = static_cast<double>(std::min(gap_ns, jitter_ns_));
    const size_t first_extra = pending_.size();
    for (int i = 1; i < copies; ++i) {
      TraceRequest c = r;
      c.arrival_ns = SaturatingAdd(c.arrival_ns, SaturatingToInt64(uniform_(rng_) * spread));
      pending_.push_back(c);
    }
    std::sort(
        pending_.begin() + first_extra, pending_.end(),
        [](const TraceRequest& a, const TraceRequest& b) { return a.arrival_ns < b.arrival_ns; });
  }

  std::unique_ptr<RequestStream> inner_;
  TransformOptions o_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  int64_t start_ns_, end_ns_, jitter_ns_;
  int whole_;
  double frac_;
  std::vector<TraceRequest> buf_;
  size_t pos_ = 0;
  bool inner_done_ = false;
  Status status_;
  std::vector<TraceRequest> pending_;
  size_t pending_pos_ = 0;
};

class TransformedSource final : public RequestSource {
 public:
  TransformedSource(std::unique_ptr<RequestSource> inner, TransformOptions o)
      : inner_(std::move(inner)), o_(o) {}
  Result<std::unique_ptr<RequestStream>> Open() const override {
    ASSIGN_OR_RETURN(auto s, inner_->Open());
    return std::unique_ptr<RequestStream>(std::make_unique<TransformedStream>(std::move(s), o_));
  }
  std::string Describe() const override {
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  " (window %.0f s + %.0f s, time compression x%g, rate multiplier x%g, seed %llu)",
                  o_.start_s, o_.duration_s, o_.time_compression, o_.rate_multiplier,
                  static_cast<unsigned long long>(o_.seed));
    return inner_->Describe() + buf;
  }

 private:
  std::unique_ptr<RequestSource> inner_;
  TransformOptions o_;
};

}  // namespace

std::unique_ptr<RequestSource> Transformed(std::unique_ptr<RequestSource> inner,
                                           TransformOptions options) {
  return std::make_unique<TransformedSource>(std::move(inner), options);
}

}  // namespace aiscale::sim::traces
