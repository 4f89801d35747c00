// Offline baselines computed from the whole trace with the replica capacity model itself
// (docs/oracle.md): the `oracle` lower bound on GPU-hours and the `static-peak` size.
//
// Per interval m (default one minute) the interval's arrivals are served, from an empty
// system, by n replicas that are ready at the interval's start (zero cold start), giving
// good_m(n), the requests within SLO. The oracle then picks n_m for every interval to
// minimise sum n_m subject to sum good_m(n_m) >= attainment x all requests (the SLO budget
// is pooled over the run, as the run's SLO attainment is), greedily taking away the replica
// whose removal loses the fewest good requests. GPU-hours = sum n_m x interval x GPUs, or the
// work bound (sum of each request's least busy time) when that is larger: intervals start
// empty and do not bill work that spills past their end, which long requests make large.
// static-peak = max_m of the fewest replicas that keep interval m itself at the attainment
// target: the peak minute, measured by the replicas it needs.
// Deterministic. Cost: O(log n) simulations of each interval plus one per removed replica.
#pragma once

#include <cstdint>
#include <vector>

#include "core/result.h"
#include "sim/inference/serving_engine.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::inference {

struct OracleOptions {
  EngineOptions engine;
  double interval_s = 60;
  int max_replicas = 100000;  // search cap per interval
};

struct OracleResult {
  double gpu_hours = 0;            // max(interval_gpu_hours, work_gpu_hours)
  double interval_gpu_hours = 0;   // sum n_m x interval x GPUs per replica
  double work_gpu_hours = 0;       // sum of MinBusySeconds x GPUs per replica
  std::vector<int> replicas;       // n_m per interval
  std::vector<uint32_t> arrivals;  // per interval
  uint64_t requests = 0;
  uint64_t good = 0;      // within SLO at the chosen sizes (pooled)
  double attainment = 0;  // good / requests
  bool feasible = true;   // false: even unbounded replicas miss the target; the oracle then
                          // meets attainment x the achievable good requests
  int static_peak_replicas = 0;
  int peak_interval = 0;            // index of the interval that sets static_peak
  int first_interval_replicas = 0;  // the fewest that keep the first interval at the target
  double interval_s = 60;
};

// Reads the stream to the end (errors from the stream are returned).
Result<OracleResult> ComputeOracle(traces::RequestStream& stream, const OracleOptions& o);

// good(n) for one interval's requests (times relative to the interval start). Exposed for tests.
uint64_t GoodWithReplicas(const std::vector<traces::TraceRequest>& reqs, int n,
                          const EngineOptions& engine);

// The least replica-seconds one request needs on this model, whatever the schedule: LLM,
// its prefill plus its tokens at a full batch's share of a step; plain, its mean service
// time over the concurrency. Summed over requests, a bound no size schedule can beat.
double MinBusySeconds(const traces::TraceRequest& r, const ReplicaModel& m);

}  // namespace aiscale::sim::inference
