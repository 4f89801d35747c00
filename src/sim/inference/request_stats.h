// RequestStats: what happened to requests, for the report (whole run) and for the signals a
// real server exports (over the last scrape window).
//
// Whole run: counts (arrived, completed, within SLO, timed out in the queue, dropped), and
// latency/TTFT histograms. Windowed: arrivals and generated tokens in 1 s buckets, the latency
// of requests completed in the last `window` and the TTFT of requests whose first token came in
// it (for p99 over the window). As vLLM observes them: TTFT when the first token is produced,
// end-to-end latency when the request finishes; a burst's slow first tokens show at once, not
// only once their long answers end.
// A request is within SLO when it completed with TTFT <= slo.ttft_s and end-to-end latency
// <= slo.latency_s; dropped and timed-out requests never are. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/inference/latency_histogram.h"

namespace aiscale::sim::inference {

struct Slo {
  double ttft_s = 2;
  double latency_s = 20;
  double attainment = 0.99;  // the fraction of requests that must be within the bounds
};

class RequestStats {
 public:
  RequestStats(Slo slo, int64_t window_ns);

  void OnArrival(int64_t t_ns);
  void OnTokens(int64_t t_ns, uint64_t tokens);
  // The first token of a request comes at first_ns (>= now_ns: an LLM step ahead is known).
  void OnFirstToken(int64_t now_ns, int64_t first_ns, int64_t ttft_ns);
  void OnComplete(int64_t t_ns, int64_t latency_ns, int64_t ttft_ns);
  void OnTimeout() { ++timed_out_; }
  void OnDrop() { ++dropped_; }

  uint64_t arrived() const { return arrived_; }
  uint64_t completed() const { return completed_; }
  uint64_t within_slo() const { return within_slo_; }
  uint64_t timed_out() const { return timed_out_; }
  uint64_t dropped() const { return dropped_; }
  double Attainment() const;
  const LatencyHistogram& latency() const { return latency_; }
  const LatencyHistogram& ttft() const { return ttft_; }
  const Slo& slo() const { return slo_; }

  // Over the window ending at now (per second; 1 s resolution).
  double ArrivalRate(int64_t now_ns) const;
  double TokenRate(int64_t now_ns) const;
  // p-quantile (nearest rank) of latencies of requests completed in (now - window, now], or of
  // TTFTs of first tokens in it; 0 when none.
  double WindowQuantile(int64_t now_ns, double q, bool ttft) const;
  // The same over (from, to]; exact for spans up to the retention (>= the window).
  double QuantileBetween(int64_t from_ns, int64_t to_ns, double q, bool ttft) const;
  // Completions are kept for max(window, retention): long enough for QuantileBetween over
  // the report's sampling interval.
  void SetRetention(int64_t ns) { retention_ns_ = std::max(ns, window_ns_); }

 private:
  struct Bucket {
    int64_t second = -1;
    uint64_t arrivals = 0;
    uint64_t tokens = 0;
  };
  struct Sample {
    int64_t t_ns;
    float s;
  };
  Bucket& BucketAt(int64_t t_ns);
  void Prune(std::deque<Sample>& d, int64_t now_ns) const;
  double WindowSum(int64_t now_ns, bool tokens) const;

  Slo slo_;
  int64_t slo_ttft_ns_, slo_latency_ns_;
  int64_t window_ns_;
  int64_t retention_ns_ = 0;  // 0: the window
  std::vector<Bucket> ring_;
  std::deque<Sample> latencies_;     // by completion time
  std::deque<Sample> first_tokens_;  // by first-token time (kept sorted)
  uint64_t arrived_ = 0, completed_ = 0, within_slo_ = 0, timed_out_ = 0, dropped_ = 0;
  LatencyHistogram latency_, ttft_;
  mutable std::vector<float> scratch_;
};

}  // namespace aiscale::sim::inference
