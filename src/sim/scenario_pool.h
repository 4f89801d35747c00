// A scenario's shared GPU pool and the compare entries that run it differently.
//
// A compare entry for a pool scenario names each workload's policy and how the pool runs:
//   compare:
//     - label: static-partition            # no `name`: a per-workload entry
//       workloads: {chat: static-peak, bert: {name: static, replicas: 2}}
//       pool: off                          # no allocator; the pool still limits what starts
//     - label: whole-job-preemption
//       pool: {reclaim: whole_job}         # the scenario's pool with these fields replaced
//     - label: aiscale                     # every workload's own policy, the scenario's pool
// Workloads an entry does not name keep their own policy. Errors are recorded at the entry.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/pool.h"
#include "sim/scenario.h"

namespace aiscale::sim {

// Reads spec.pool into s (a size is required: the simulated pool has no engine to ask).
void ReadScenarioPool(const config::ConfigNode& spec, Scenario& s);
// Each workload's pool fields (after its common fields are read).
void ReadScenarioMembership(const config::ConfigNode& w, const Scenario& s, WorkloadSpec& spec);

// A per-workload entry's `role` in a pool comparison (sim/pool_report.h, sim/tenant_report.h).
const std::vector<std::string>& PoolRoles();

// True for a compare entry with a label and no policy name (the per-workload form).
bool IsPerWorkloadEntry(const config::ConfigNode& c);
// Checks a per-workload entry's fields and workload names (errors at the entry).
void CheckPerWorkloadEntry(const config::ConfigNode& c, const Scenario& s);
// The pool a compare entry runs with: the scenario's with the entry's overrides; nullopt when
// the scenario has none (then a `pool:` in the entry is an error there).
std::optional<PoolSpec> PoolForEntry(const config::ConfigNode& c, const Scenario& s);
// The policy an entry names for `workload`: its node, or nullopt when it names none.
std::optional<config::ConfigNode> EntryPolicyFor(const config::ConfigNode& c,
                                                 const std::string& workload);

}  // namespace aiscale::sim
