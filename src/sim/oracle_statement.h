// OracleStatement: the one sentence that says what an inference run's ratios are measured
// against, wherever a ratio to the oracle is shown (the CLI table, report.html): the oracle's
// GPU-hours as the larger of its two bounds, which one binds, the attainment its own plan
// reaches, and whether the SLO target is within reach at all (docs/oracle.md).
// Pure: reads report.json fields of one run entry; empty when the run has no oracle.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aiscale::sim {

std::string OracleStatement(const nlohmann::json& run);

}  // namespace aiscale::sim
