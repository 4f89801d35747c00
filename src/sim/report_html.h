// ReportHtml: report.html, one self-contained file: the report's data inline plus a small
// inline script that draws SVG charts per run side by side (nodes desired vs ready, GPU
// utilization, samples/s, phases shaded, failures and rescales marked) and the summary table.
// No network references of any kind, so it opens from disk anywhere.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aiscale::sim {

// `report` is ReportJson()'s output.
std::string ReportHtml(const nlohmann::json& report);

}  // namespace aiscale::sim
