// CapacityLearner: how many requests per second one replica serves within the SLO, learned
// online from what the replicas report, not configured (docs/slo-policy.md).
//
// Each tick with completions gives a sample: the load (request rate per ready replica) and the
// window's SLO ratio r = max(ttft_p99 / ttft_slo, latency_p99 / latency_slo). Samples go into
// load bins on a log scale (6% wide), each keeping decayed counts of windows that held (r <= 1 -
// margin) and windows that did not (a growing queue counts as min_weight of them; a window whose
// TTFT held and whose latency broke over fewer requests than the SLO lets miss one of counts by
// that share: its p99 is one long answer, not the load). The share of
// windows that broke is fitted as non-decreasing in the load (adjacent bins pooled where it is
// not, by weight); a block of bins with enough weight is good when most of its windows held,
// bad otherwise. The estimate is the highest load at which the SLO held: the top of the
// highest good bin below the lowest bad one. It starts there (conservative: the load the
// service is carrying while it meets the SLO), probes one bin beyond its evidence while no bad
// bin is near, the service is healthy (no backlog, the window held) and it stays within twice
// the highest load that held, falls to just under the lowest bad bin, and moves
// at most `max_rise_per_min` up (`fast_rise_per_min` while nothing broke within twice it) and
// `max_fall_per_min` down per minute of ticks. Windows whose
// quantiles still carry an earlier backlog are left out; a load at which the queue grows counts
// as a window that did not hold. One sample is never enough to move an estimate once there is
// one: a bin needs `min_weight` windows, so a one-sample jump in load changes nothing.
//
// Why utilization: the policy sizes with headroom, so it rarely runs a replica near the
// capacity, and a probe from the loads it did run at stays under its own estimate. Where the
// replicas report how full their busiest resource is (vLLM's KV cache in use),
// load / utilization x util_fill, smoothed over util_tau_s of windows that held
// at util_min or more, is a ceiling the probe may rise toward; windows that break there pull it
// back as before. The GPU busy share (dcgm-exporter's GPU_UTIL) gives the same extrapolation as
// a lift only: the probe may rise toward it, but it never lowers the estimate (a batching
// server serves more once its GPU is busy all the time).
//
// Promises: pure over its PersistentState (keys under `prefix`); O(bins) per tick (a few
// dozen); the estimate is never negative and never falls below half of itself in one update
// (such an update is refused: the last good estimate is held and the reason returned).
// Not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/state.h"

namespace aiscale::decide::serving {

struct CapacityParams {
  double ttft_slo_s = 2;
  double latency_slo_s = 20;
  // A window holds when its p99s are within (1 - margin) x SLO. A window's p99 of a few hundred
  // requests is noisy: with TTFT observed at the first token (as vLLM does), 0.05 learned
  // capacities at which bursts broke the SLO (docs/slo-policy.md, the margin sweep).
  double margin = 0.15;
  double bin_ratio = 1.08;     // width of a load bin
  double min_weight = 4;       // decayed windows a block of bins needs to count
  double half_life_s = 21600;  // old windows fade: 6 h
  double max_rise_per_min = 0.04;
  // While nothing broke within twice the estimate (a first estimate far under the capacity),
  // it may rise this much faster: a conservative start must not take hours to leave.
  double fast_rise_per_min = 0.2;
  double max_fall_per_min = 0.15;
  // Extrapolation from utilization (below): the share of the busiest resource a replica may be
  // filled to, and the least utilization worth extrapolating from (an idle replica's binding
  // resource may be another one than the one reported).
  double util_fill = 0.75;
  double util_min = 0.2;
  double util_tau_s = 600;  // smoothing of the extrapolated ceiling
  // The share of requests the SLO lets miss (1 - attainment): a p99 over fewer than 1 / miss
  // requests is the slowest one alone.
  double miss_share = 0.01;
};

struct CapacitySample {
  double load = 0;                   // request rate per ready replica (> 0)
  std::optional<double> ttft_p99_s;  // nullopt: nothing completed in the window
  std::optional<double> latency_p99_s;
  // Whether the window's quantiles speak for this load: false while they still carry requests
  // that waited in an earlier backlog (the load then says nothing about them).
  bool clean = true;
  // Requests are waiting and the queue is not shrinking: the replicas are saturated at this
  // load, whatever the quantiles say (they lag).
  bool saturated = false;
  // How full the ready replicas' binding resource is, 0-1 (the mean KV cache in use); nullopt
  // when the replicas report none.
  std::optional<double> utilization;
  // The share of time the replicas' GPUs were busy, 0-1 (dcgm-exporter's GPU_UTIL); nullopt when
  // not reported. load x util_fill / busy is a floor under the capacity, never a roof: a
  // batching server serves more once busy all the time, so the estimate may rise toward it but
  // never falls for it.
  std::optional<double> busy;
  // Requests the window's quantiles were taken over (0: unknown, a full vote).
  double requests = 0;
};

struct CapacityState {
  double estimate = 0;   // requests/s per replica; 0 = not learned yet
  double target = 0;     // where the evidence points (the estimate moves toward it)
  double held_at = 0;    // the highest load at which the SLO held (0: none yet)
  double broke_at = 0;   // the lowest load at which it did not (0: none)
  double ceiling = 0;    // load x util_fill / utilization, smoothed (0: no utilization seen)
  double lift = 0;       // load x util_fill / busy, smoothed (0: no GPU busy share seen)
  double ratio = 0;      // this window's SLO ratio (0 when there was no sample)
  bool refused = false;  // the update was refused; `reason` says why
  std::string reason;    // what moved the estimate or why it held
};

class CapacityLearner {
 public:
  CapacityLearner(const CapacityParams& p, PersistentState& state, std::string_view prefix);

  // One tick's evidence at time now_s (seconds, increasing).
  CapacityState Observe(const CapacitySample& s, double now_s);
  // A tick whose input was not to be trusted: nothing is learned, the estimate is held.
  CapacityState Hold(std::string reason) const;
  double estimate() const;

 private:
  struct Evidence {
    double held_at = 0, broke_at = 0, ceiling = 0, lift = 0;
  };
  void Decay(double now_s);
  void Add(double load, bool held, double weight);
  // How much one window counts: a latency break seen in fewer requests than the SLO lets miss
  // one of is one slow request (a long answer), not the load.
  double Vote(const CapacitySample& s, bool held) const;
  Evidence Read() const;
  // Folds this window's share `u` of a resource in use into the smoothed extrapolation under
  // `key`; returns it.
  double Extrapolate(const CapacitySample& s, std::optional<double> u, const std::string& key,
                     bool held, double now_s);
  CapacityState Step(const Evidence& ev, bool breaking, double now_s);

  CapacityParams p_;
  PersistentState& state_;
  // The most load per replica over the last latency limit, with this tick's included.
  double RecentPeak(double load, double now_s);

  std::string est_key_, time_key_, bins_key_, peak_t_key_, peak_v_key_, ceil_key_, lift_key_;
};

}  // namespace aiscale::decide::serving
