// The many-tenant comparison (sim/tenant_report.h) as a table for `aiscale simulate`: pending
// GPU-minutes per tenant and in all, one column per run, then the pool's figures and each
// target with its value and verdict.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

namespace aiscale::cli {

void PrintTenantComparison(const nlohmann::json& comparison, std::ostream& os);

}  // namespace aiscale::cli
