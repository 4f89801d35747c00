// InferenceVerdict: judges one inference run of report.json against the targets
// (GPU-hours <= 1.15x the oracle, SLO attainment >= its target, no worse than hpa and kpa on
// both, >= 30% fewer GPU-hours than static-peak) and, for every target missed, says by how
// much and what the run was doing when its requests missed, from its own timeline.
// Pure: reads only the run entries; empty for runs that are not InferenceService runs.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace aiscale::sim {

// `runs`: every run entry of the scenario: each hpa and kpa run (by `policy_name`, so every
// configuration compared) and static-peak (by `policy`) are measured against.
// Returns {"targets": [{"name", "measured", "target", "met"}...], "met_all", "why_not"?}
// or null when `run` has no oracle figures.
nlohmann::json InferenceVerdict(const nlohmann::json& run, const std::vector<nlohmann::json>& runs);

// Of the requests `run` missed, the fraction that missed in report intervals where fewer
// replicas were ready than were asked for (cold start under way), from the timeline's
// cumulative `missed`, `ready` and `desired`. 0 when there are no misses.
double MissesDuringColdStart(const nlohmann::json& run);

}  // namespace aiscale::sim
