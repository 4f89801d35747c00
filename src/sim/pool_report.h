// PoolComparison: what issue 23 asks of a mixed-pool scenario, from its runs (each a compare
// entry with a `role`: static_partition, separate_autoscalers, whole_job, pool, alone).
//
// Per run: the inference service's SLO attainment and GPU-hours; the training jobs' samples
// trained (goodput), completion, rescales, restart seconds paid and samples lost; the pool's
// GPU utilization. Across runs: the upper bound (sim/pool_bound.h, from the inference oracle of
// the `pool` run), the pool's goodput over the static partition, over whole-job preemption and
// over the bound, its SLO attainment against the service `alone`, the training rescales per
// inference peak, and a verdict per target with the numbers. Null when no run has the `pool`
// role. Pure function of the scenario and its results.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/runner.h"
#include "sim/scenario.h"

namespace aiscale::sim {

nlohmann::json PoolComparison(const Scenario& s, const ScenarioResult& r);

// Inference peaks in an oracle plan: maximal runs of intervals where the service needs GPUs
// the training jobs would hold at full size (oracle GPUs > pool - training's full GPUs), runs
// apart by less than `merge_s` counted as one.
int CountPeaks(const std::vector<int>& replicas, double interval_s, int gpus_per_replica,
               int64_t room, double merge_s);

// The rescales a job paid for others' peaks: each shrink, and each growth after one until the
// job is back at the size it had before it (a growth onto idle GPUs no peak took is a loan).
// Replacements of failed nodes are not counted.
int ReclaimRescales(const std::vector<report::RunEvent>& events);

}  // namespace aiscale::sim
