// JudgeTraining: one training workload of one run against the scenario's training targets
// (report/targets.h), saying for each target missed by how much.
//
// The seed figures against static (GPU-hours, mean GPU utilization, speed) are required only
// where the oracle itself reaches them in the same model; otherwise they are listed as not
// required with the oracle's own figure. Pure.
#pragma once

#include <optional>

#include "report/run_summary.h"
#include "report/targets.h"

namespace aiscale::report {

// `w`: the workload as run; `static_w`: the same workload in the static run (null: none, and
// the targets against static are not judged). nullopt when `w` has no training figures or no
// oracle, or when no training target is set.
std::optional<Verdict> JudgeTraining(const WorkloadSummary& w, const WorkloadSummary* static_w,
                                     const Targets& t);

}  // namespace aiscale::report
