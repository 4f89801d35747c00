// Offline baselines computed from the whole trace with the replica capacity model itself
// (docs/oracle.md): the `oracle` lower bound on GPU-hours and the `static-peak` size.
//
// The oracle is the larger of two lower bounds, each below every schedule that meets the SLO
// target on this model:
//  - interval bound: cut the arrivals into intervals; for each, good_m(n) under a relaxation
//    no schedule of n replicas beats (oracle_curve.h: starts empty, waiting requests get free
//    help at the end); then the least sum of n_m x interval length with sum good_m(n_m) >=
//    required, solved as a linear programme over each curve's upper concave envelope (a
//    fractional size is allowed, so the answer is below the best whole-number plan). The last
//    interval is billed only up to the last arrival.
//  - work bound: the replica-seconds that the `required` cheapest servable requests need at
//    the least (MinBusySeconds), whatever the schedule.
// `required` = min(servable requests, ceil(attainment x all requests)); a request is
// unservable only when no size serves it within the SLO (oracle_request.h), so that count does
// not depend on the interval cut or on other requests. When servable < attainment x all, the
// target is out of reach for every policy (`feasible` false) and the bound is for serving every
// servable request.
// static-peak = max_m of the fewest replicas that keep interval m at the attainment target
// without help: the peak minute, measured by the replicas it needs.
// Deterministic. Cost: up to N_m + 1 simulations of each interval's requests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/inference/serving_engine.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::inference {

struct OracleOptions {
  EngineOptions engine;
  double interval_s = 60;
  // Requests arriving at or after this time are left out: the run it bounds ends there (a
  // scenario's duration shorter than its trace's window).
  int64_t until_ns = INT64_MAX;
};

struct OracleResult {
  double gpu_hours = 0;            // max(interval_gpu_hours, work_gpu_hours)
  double interval_gpu_hours = 0;   // sum n_m x billed length of m x GPUs per replica
  double work_gpu_hours = 0;       // required cheapest MinBusySeconds x GPUs per replica
  std::string bound;               // "interval" or "work": the one that sets gpu_hours
  std::vector<int> replicas;       // n_m per interval: the cheapest plan of the relaxed
                                   // problem that meets `required` (at or above the bound)
  std::vector<uint32_t> arrivals;  // per interval
  uint64_t requests = 0;
  uint64_t unservable = 0;  // no size serves them within the SLO
  uint64_t required = 0;    // good requests the bound is for
  double good = 0;          // good requests of that plan (>= required)
  double attainment = 0;    // good / requests
  bool feasible = true;     // false: servable requests alone are below the target
  int static_peak_replicas = 0;
  int peak_interval = 0;            // index of the interval that sets static_peak
  int first_interval_replicas = 0;  // the fewest that keep the first interval at the target
  double interval_s = 60;
  // Requests arriving at or after this time are left out: the run it bounds ends there (a
  // scenario's duration shorter than its trace's window).
  int64_t until_ns = INT64_MAX;
};

// Reads the stream to the end (errors from the stream are returned).
Result<OracleResult> ComputeOracle(traces::RequestStream& stream, const OracleOptions& o);

// Requests within the SLO when n replicas, ready at time 0, serve `reqs` (absolute times) to
// the end. Exposed for tests.
uint64_t GoodWithReplicas(const std::vector<traces::TraceRequest>& reqs, int n,
                          const EngineOptions& engine);

}  // namespace aiscale::sim::inference
