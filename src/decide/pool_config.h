// The `pool:` section and each workload's pool fields, read once for both the scenario and the
// controller config (one schema, one set of errors, each at its file:line:column and field).
//
//   pool:
//     size: 32                      # GPUs; or `from: kubernetes` / `from: slurm`
//     tenants:
//       - {name: serving, guaranteed: 16, borrow_limit: 8, weight: 1}
//       - {name: research, guaranteed: 16, weight: 2}      # no borrow_limit: may borrow any idle
//     priorities: [serving, training, batch]               # highest first (the default)
//     reclaim: shrink                # or whole_job (suspend a whole job, as Kueue does)
//     regrow_delay: 10m              # besides twice the job's own restart cost
//     shrink_grace: 60s              # a drop in the engine's size counts once it lasts this long
//   workloads:
//     - {name: chat, tenant: serving, priority: serving, gpus_per_replica: 1, ...}
//     - {name: bert, tenant: research, gpus_per_replica: 8, shrinkable: true, shrink_floor: 2}
//
// Defaults: no tenants listed means one tenant, `default`, guaranteed nothing and allowed to
// borrow everything (priorities alone decide); a workload's tenant defaults to the only tenant;
// its priority to `serving` for an InferenceService, `training` for a TrainingJob or PyTorchJob
// and `batch` otherwise; training kinds are shrinkable down to min_replicas unless they say
// otherwise. Validation: a guarantee sum above a given size, an unknown tenant or priority, a
// priority listed twice (the order would be a cycle), a shrink floor outside [min, max] or not a
// multiple of the granularity, pool fields without a pool.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/pool.h"
#include "core/spec.h"

namespace aiscale::decide {

// The per-workload field names, for the readers' known-field lists.
const std::vector<std::string>& PoolWorkloadFields();

// The engines a pool's size can be read from (`from:`), besides a fixed `size:`.
const std::vector<std::string>& PoolSizeEngines();

// Reads `pool` (a map); every problem is recorded at its field.
PoolSpec ParsePool(const config::ConfigNode& pool);

// Reads workload `w`'s pool fields into spec.pool. `pool` null: the file has no pool section, and
// any pool field is an error there. Needs spec's kind, min/max and granularity read already.
void ReadPoolMembership(const config::ConfigNode& w, const PoolSpec* pool, WorkloadSpec& spec);

// True for the kinds whose replicas are an elastic training job's nodes.
bool IsTrainingKind(const std::string& kind);

}  // namespace aiscale::decide
