// GpuDemandSpec: the `demand` body of a `kind: GpuDemand` scenario workload, a tenant of a shared
// GPU pool described by its demand curve (docs/pool.md, "Many tenants").
//
//   demand:
//     trace:
//       format: helios_vc        # a Helios virtual cluster's sequence (sim/traces/helios_trace.h)
//       path: ../../shared/traces/helios_earth_vc_sequence/vc6YE_cluster_sequence_vc.csv.gz
//       start_s: 0               # window into the curve; duration_s 0 = to its end
//       duration_s: 0
//     # or format: points, points: [[t_s, gpus], ...]: gpus[i] from t[i] to t[i+1]; the last
//     # point ends the curve (as a rate series does)
//     restart_s: 150             # from GPUs granted to the job on them working (start, resume)
//     signal: gpu_demand         # the name the curve is exported under
//
// Parsed once per build; the curve is read whole (a bad row is an error at `trace.path` with the
// trace's own FILE:LINE: field) and shared by every copy. Relative paths are resolved against
// the scenario file's folder.
#pragma once

#include <memory>
#include <string>

#include "core/config/config_node.h"
#include "sim/traces/demand_series.h"

namespace aiscale::sim::demand {

inline constexpr const char* kGpuDemandSignal = "gpu_demand";
inline constexpr double kMaxRestartSeconds = 86400;

struct GpuDemandSpec {
  std::shared_ptr<const traces::DemandSeries> series;
  double restart_s = 0;
  std::string signal = kGpuDemandSignal;
  std::string source;  // "helios_vc PATH" or "points", for the summary

  // Null on any error, each recorded at its field.
  static std::shared_ptr<const GpuDemandSpec> Parse(const config::ConfigNode& body);
};

}  // namespace aiscale::sim::demand
