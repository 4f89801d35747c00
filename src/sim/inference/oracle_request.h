// What the oracle knows about one request on its own, whatever else arrives and however the
// trace is cut into intervals (docs/oracle.md):
//  - its solo outcome: TTFT and latency on an empty replica that starts it at a given time
//    (no replica of the model does better: a batch of one has the shortest step, and an
//    empty replica makes no request wait);
//  - whether it is servable: some size serves it within the SLO, i.e. its solo outcome at its
//    own arrival is within the SLO (and it fits a replica's KV cache);
//  - its least busy time: the replica-seconds it needs at the least on this model.
// Pure functions of (request, engine options); deterministic.
#pragma once

#include <cstdint>

#include "sim/inference/serving_engine.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::inference {

struct SoloOutcome {
  bool fits = true;  // false: larger than a replica's KV cache (dropped at any size)
  int64_t ttft_ns = 0;
  int64_t latency_ns = 0;
};

// The request served alone by an empty replica that takes it `wait_ns` after its arrival;
// TTFT and latency count from the arrival, as RequestStats does.
SoloOutcome Solo(const traces::TraceRequest& r, const EngineOptions& e, int64_t wait_ns = 0);

// Within the SLO as RequestStats judges a completion (TTFT and latency both within bounds),
// and not past the queue timeout when it waited.
bool SoloWithinSlo(const traces::TraceRequest& r, const EngineOptions& e, int64_t wait_ns = 0);

// Some size serves it within the SLO: SoloWithinSlo with no wait.
inline bool Servable(const traces::TraceRequest& r, const EngineOptions& e) {
  return SoloWithinSlo(r, e, 0);
}

// The least replica-seconds the request needs on this model, whatever the schedule: LLM, its
// prefill plus its tokens at a full batch's share of a step; plain, its own service time (the
// draw the engine gives it) over the concurrency. Summed over requests, a bound no size
// schedule can beat.
double MinBusySeconds(const traces::TraceRequest& r, const EngineOptions& e);

}  // namespace aiscale::sim::inference
