// MetricSource: where observations come from (Prometheus, an exposition endpoint, the sim).
//
// Contract: Fetch returns raw observations with their measurement timestamps, or an error
// Status saying why it could not ("unable to query prometheus for gpu_util: timeout").
// An error is missing data for the Controller, never a reason to scale down. Implementations
// must be safe to call from several threads at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/observation.h"
#include "core/result.h"
#include "core/scale.h"

namespace aiscale {

struct MetricQuery {
  WorkloadRef workload;
  std::string signal;      // canonical name the result is reported as
  std::string expression;  // source-specific (PromQL, exposition metric name); may be empty
};

class MetricSource {
 public:
  virtual ~MetricSource() = default;
  virtual std::string_view Name() const = 0;
  virtual Result<std::vector<Observation>> Fetch(const MetricQuery& q, TimePoint now) = 0;
};

}  // namespace aiscale
