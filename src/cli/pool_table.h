// The mixed-pool comparison (sim/pool_report.h) as a table for `aiscale simulate`: one column
// per run, the figures issue 23 asks for, then each target with its value and verdict.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

namespace aiscale::cli {

void PrintPoolComparison(const nlohmann::json& comparison, std::ostream& os);

}  // namespace aiscale::cli
