// Observation: one timestamped value of one signal for one instance (GPU, pod, job).
// Sources return these raw; filtering (stale, NaN, out of range) happens once, in
// WorkloadSignals::Ingest, so every source gets the same rules.
#pragma once

#include <string>

#include "core/time.h"

namespace aiscale {

struct Observation {
  std::string signal;    // canonical name (core/signal.h) or a custom name
  std::string instance;  // which GPU/pod/job; empty for a workload-level value
  double value = 0;
  TimePoint at{};     // when the value was measured, not when it was fetched
  bool ready = true;  // for per-pod values: was the pod ready (HPA's unready-pod rules)
  // The instance names a replica (a `pod` label, a replica target): when it is not one of
  // the engine's current replicas, the series is foreign (WorkloadSignals::Ingest).
  bool per_replica = false;
};

}  // namespace aiscale
