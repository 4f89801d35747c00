// Thread-safe MetricSources for Collector tests: CountingSource records every FetchBatch (the
// queries asked together) and answers one observation per query, or fewer results than asked
// when `short_by` is set, or a scripted error; HangingSource blocks every FetchBatch until the
// test calls Release (a Prometheus that accepted the connection and never answers).
// Both may be called from executor threads while the test reads their counters.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "core/metric_source.h"

namespace aiscale::testing {

class CountingSource final : public MetricSource {
 public:
  explicit CountingSource(std::string name, double value = 1)
      : name_(std::move(name)), value_(value) {}
  std::string_view Name() const override { return name_; }
  FetchResult Fetch(const MetricQuery& q, TimePoint now) override {
    return FetchBatch({q}, now).at(0);
  }
  std::vector<FetchResult> FetchBatch(const std::vector<MetricQuery>& qs, TimePoint now) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> asked;
    for (const MetricQuery& q : qs) asked.push_back(q.workload.name + "/" + q.signal);
    batches_.push_back({now, std::move(asked), &qs});
    const size_t n = qs.size() > short_by_ ? qs.size() - short_by_ : 0;
    if (!error_.ok()) return std::vector<FetchResult>(n, error_);
    std::vector<FetchResult> out;
    for (size_t i = 0; i < n; ++i) {
      out.push_back(std::vector<Observation>{{qs[i].signal, "a", value_, now, true},
                                             {qs[i].signal, "b", value_, now, true}});
    }
    return out;
  }

  struct Batch {
    TimePoint at;
    std::vector<std::string> asked;  // "workload/signal", in the order asked
    const void* list = nullptr;      // the query vector's address (reused or built anew)
  };
  std::vector<Batch> batches() const {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  void set_error(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::move(s);
  }
  void set_value(double v) {
    std::lock_guard<std::mutex> lock(mu_);
    value_ = v;
  }
  void set_short_by(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    short_by_ = n;
  }

 private:
  const std::string name_;
  mutable std::mutex mu_;
  double value_ = 1;
  Status error_;
  size_t short_by_ = 0;
  std::vector<Batch> batches_;
};

class HangingSource final : public MetricSource {
 public:
  std::string_view Name() const override { return "hung"; }
  FetchResult Fetch(const MetricQuery& q, TimePoint now) override {
    return FetchBatch({q}, now).at(0);
  }
  std::vector<FetchResult> FetchBatch(const std::vector<MetricQuery>& qs, TimePoint) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++calls_;
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
    --waiting_;
    return std::vector<FetchResult>(qs.size(), Status::Unavailable("released at test end"));
  }
  // Lets every blocked and future FetchBatch return. Idempotent.
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // Waits (30 s at most) until a FetchBatch is blocked, so the test knows the fetch started.
  bool AwaitBlocked() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [this] { return waiting_ > 0; });
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int calls_ = 0;
  int waiting_ = 0;
};

// Releases a HangingSource when it goes out of scope, so a failed assertion never leaves an
// executor thread blocked forever (the executor's destructor would wait on it).
class ReleaseOnExit {
 public:
  explicit ReleaseOnExit(HangingSource& s) : s_(s) {}
  ~ReleaseOnExit() { s_.Release(); }

 private:
  HangingSource& s_;
};

}  // namespace aiscale::testing
