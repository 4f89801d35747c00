// TenantComparison: what issue 23 asks of a many-tenant pool (Helios: each tenant a GpuDemand
// curve), from its runs, each a compare entry with a `role`: static_quotas (no borrowing),
// free_borrowing (borrowing with reclaims free and instant: an idealized bound) and pool.
//
// Per run and per tenant: pending GPU-minutes (demand not held), held and demanded GPU-minutes,
// reclaimed GPUs and their cost in GPU-minutes, and the guarantee waits; per run in all: the
// sums, the pool's utilization and the longest wait for a lent guarantee. Verdicts: the pool's
// pending over static quotas' (<= 0.5), and an owner's guarantee back within one control
// period (granted) plus the lender's restart (ready). Null unless a run has the `pool` role and
// the scenario has GpuDemand workloads. Pure function of the scenario and its results.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/runner.h"
#include "sim/scenario.h"

namespace aiscale::sim {

nlohmann::json TenantComparison(const Scenario& s, const ScenarioResult& r);

}  // namespace aiscale::sim
