// MetricSource: where observations come from (Prometheus, an exposition endpoint, the sim).
//
// Contract: Fetch returns raw observations with their measurement timestamps, or an error
// Status saying why it could not ("unable to query prometheus for gpu_util: timeout"), with a
// code (kUnavailable, kDeadlineExceeded, kInvalid for a malformed answer...). An error is
// missing data for the Controller, never a reason to scale down. A source gives up by the
// query's timeout. Implementations must be safe to call from several threads at once.
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
  Duration timeout = Seconds(5);
  // Samples older than this are missing data (the workload's staleness); zero: no bound. A
  // source that can ask for no older samples (Prometheus's lookback_delta) does.
  Duration max_age{};
};

using FetchResult = Result<std::vector<Observation>>;

class MetricSource {
 public:
  virtual ~MetricSource() = default;
  virtual std::string_view Name() const = 0;
  virtual FetchResult Fetch(const MetricQuery& q, TimePoint now) = 0;
  // Answers several queries, one result per query in the same order. Sources that can serve
  // many queries with one request (a Prometheus query template shared by many workloads)
  // override this; the default asks one by one.
  virtual std::vector<FetchResult> FetchBatch(const std::vector<MetricQuery>& qs, TimePoint now) {
    std::vector<FetchResult> out;
    out.reserve(qs.size());
    for (const MetricQuery& q : qs) out.push_back(Fetch(q, now));
    return out;
  }
};

}  // namespace aiscale
