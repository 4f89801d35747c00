// Pipeline: a workload's policy, stabilizer and constraints, built from its config node.
//
// Why: the scenario file and the controller config describe workloads the same way; one
// builder keeps them from drifting. Build fails (with every config error recorded) rather
// than return a partial pipeline.
#pragma once

#include <memory>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "core/result.h"
#include "decide/constraints.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {

struct Pipeline {
  std::unique_ptr<Policy> policy;
  std::unique_ptr<Stabilizer> stabilizer;  // may be null: pass-through
  std::unique_ptr<Constraints> constraints;
  WorkloadContext context;
};

// `workload` holds min_replicas, max_replicas, granularity, scale_to_zero, behavior and
// `policy` (a map with `name`). `policy_override`, when given, replaces the policy node (used
// to run baselines side by side on the same workload).
Result<Pipeline> BuildPipeline(const PolicyRegistry& registry, const config::ConfigNode& workload,
                               const config::ConfigNode& policy_node, double control_period_s,
                               double cold_start_s);

}  // namespace aiscale::decide
