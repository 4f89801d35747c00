// TrainingVerdict: judges one training run of report.json against issue 10's targets and says,
// for each one missed, by how much.
//
// Targets: GPU-hours <= tolerance x the oracle's (1.05 on the demo, 1.10 elsewhere),
// completion <= 1.10 x static, <= 1 rescale per hour, every failed node replaced within 600 s.
// Beside them the seed's figures against static (GPU-hours -30%, mean GPU util >= 0.80, speed
// >= 0.90): each is required only where the oracle itself reaches it in the same model, and
// otherwise listed as not required with the oracle's own figure. Pure: reads run entries only;
// null for runs without training oracle figures (inference runs, static).
#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace aiscale::sim {

// GPU-hours over the oracle allowed for a scenario: 1.05 for the demo (names starting with
// "demo"), 1.10 for every other training scenario.
double TrainingOracleTolerance(std::string_view scenario);

// `runs`: every run entry of the scenario (static is found by `policy`).
// Returns {"targets": [{"name", "measured", "target", "met", "required", "oracle"?}...],
// "met_all", "why_not"?, "oracle_note"?}; met_all counts required targets only.
nlohmann::json TrainingVerdict(const nlohmann::json& run, const std::vector<nlohmann::json>& runs,
                               std::string_view scenario);

}  // namespace aiscale::sim
