// JudgeServing: one serving workload (InferenceService) of one run against the scenario's
// serving targets (report/targets.h); for every target missed, by how much and what the run
// was doing when its requests missed, from its own timeline. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/run_summary.h"
#include "report/targets.h"

namespace aiscale::report {

// The same workload in another run of the scenario.
struct PeerRun {
  std::string label;
  std::string policy;
  Baseline baseline = Baseline::kNone;
  const WorkloadSummary* workload = nullptr;
};

// `label`: the run judged (its peer entry, if listed, is skipped). nullopt when `w` has no
// serving figures or no oracle, or when no serving target is set.
std::optional<Verdict> JudgeServing(const WorkloadSummary& w, const std::string& label,
                                    const std::vector<PeerRun>& peers, const Targets& t);

// Of the requests missed over `timeline`, the fraction that missed in report intervals where
// fewer replicas were ready than were asked for (cold start under way), from the cumulative
// `missed`, `ready` and `desired`. 0 when there are no misses.
double MissesDuringColdStart(const std::vector<TimelinePoint>& timeline);

}  // namespace aiscale::report
