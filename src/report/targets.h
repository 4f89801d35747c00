// Targets: what a scenario's runs are judged against, from its `spec.targets:` map. A target
// the scenario does not set is not judged; a scenario without `targets:` gets no verdicts.
//
// Why in the scenario: the bar belongs to the experiment (the demo holds the training policy
// to 1.05x the oracle, other training scenarios to 1.10x), not to the code, which once chose
// it from the scenario's name.
//
//   targets:
//     gpu_hours_over_oracle: 1.10      # GPU-hours <= 1.10 x the offline oracle's
//     completion_vs_static: 1.10       # training: completion time <= 1.10 x static's
//     rescales_per_hour: 1             # training: the policy's own rescales per hour
//     failure_replaced_s: 600          # training: every failed node replaced within
//     seed_gpu_hours_vs_static: 0.70   # training: required only where the oracle reaches it
//     seed_mean_gpu_util: 0.80         #   (listed with the oracle's own figure otherwise)
//     seed_speed_vs_static: 0.90
//     slo_attainment: slo              # serving: >= the service's slo.attainment (or a number)
//     no_worse_than: [hpa, kpa]        # serving: GPU-hours and attainment vs every run of these
//     fewer_gpu_hours_than_static_peak: 0.30   # serving: at least 30% fewer than static-peak
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_node.h"

namespace aiscale::report {

struct Targets {
  std::optional<double> gpu_hours_over_oracle;
  std::optional<double> completion_vs_static;
  std::optional<double> rescales_per_hour;
  std::optional<double> failure_replaced_s;
  std::optional<double> seed_gpu_hours_vs_static;
  std::optional<double> seed_mean_gpu_util;
  std::optional<double> seed_speed_vs_static;
  // Serving: attainment >= this; `slo_from_service` takes each service's own target.
  std::optional<double> slo_attainment;
  bool slo_from_service = false;
  std::vector<std::string> no_worse_than;  // policy names
  std::optional<double> fewer_gpu_hours_than_static_peak;

  bool empty() const;
};

// Reads `node` (the `targets:` map; absent gives no targets). Errors (unknown keys, values out
// of bounds) are recorded in the node's sink with their file:line:column and field path.
Targets ParseTargets(const config::ConfigNode& node);

}  // namespace aiscale::report
