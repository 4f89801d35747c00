// The explicit list of simulated workload kinds (docs/architecture.md, practice 6): kind name ->
// builder.
//
// A scenario workload is a map with the common fields (name, kind, min_replicas, max_replicas,
// granularity, scale_to_zero, initial_replicas, policy, behavior) plus one kind-specific body
// field (`job` for TrainingJob). The builder reads the whole workload node, records every
// config error there and returns null on error, so no half-valid workload exists. Adding a
// kind = one builder function and one line in workload_factory.cc.
//
//   const WorkloadKind* k = FindWorkloadKind("TrainingJob");
//   std::unique_ptr<SimWorkload> w = k->build(node, env);  // null: see node.errors()
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config_node.h"
#include "sim/sim_workload.h"
#include "sim/workload_env.h"

namespace aiscale::sim {

using WorkloadBuilder = std::unique_ptr<SimWorkload> (*)(const config::ConfigNode& workload,
                                                         const WorkloadEnv& env);

struct WorkloadKind {
  std::string kind;        // the scenario's `kind:` value
  std::string body_field;  // the kind's own config map in the workload entry
  WorkloadBuilder build;
};

const std::vector<WorkloadKind>& WorkloadKinds();
// Null when no kind has that name.
const WorkloadKind* FindWorkloadKind(std::string_view kind);

}  // namespace aiscale::sim
