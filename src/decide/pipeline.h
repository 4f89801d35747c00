// Pipeline: a workload's PolicySpec (policy, stabilizer, constraints) built once from its
// config, and the workload fields that the Scenario and the ControllerConfig share.
//
// Why: the scenario file and the controller config describe workloads the same way; one reader
// keeps them from drifting (same fields, same defaults, same errors). Build fails (with every
// config error recorded at its field) rather than return a partial spec. The stabilizer is the
// registry entry's choice, never a comparison of names.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/result.h"
#include "core/spec.h"
#include "decide/constraints.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {

// The fields every workload entry has, in both files.
const std::vector<std::string>& CommonWorkloadFields();

// `workload` holds min_replicas, max_replicas, granularity, scale_to_zero and behavior;
// `policy_node` is a policy map with `name` (the workload's own, or a compared baseline's).
Result<PolicySpec> BuildPipeline(const PolicyRegistry& registry, const config::ConfigNode& workload,
                                 const config::ConfigNode& policy_node, double control_period_s,
                                 double cold_start_s);

// Reads the common fields of a workload entry (name, kind, namespace, bounds, staleness,
// cold_start) into a spec without a pipeline; errors are recorded at their fields.
// `collect_interval_s` is how often signals are fetched: staleness defaults to 3 of them.
WorkloadSpec ReadWorkloadFields(const config::ConfigNode& workload, double collect_interval_s);

}  // namespace aiscale::decide
