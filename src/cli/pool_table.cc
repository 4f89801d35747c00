#include "cli/pool_table.h"

#include <iomanip>
#include <sstream>
#include <string>

#include "report/format.h"

namespace aiscale::cli {
namespace {

double FirstInference(const nlohmann::json& run, const char* key) {
  for (const auto& [name, f] : run["inference"].items()) return f.value(key, 0.0);
  return 0;
}

}  // namespace

void PrintPoolComparison(const nlohmann::json& c, std::ostream& os) {
  const nlohmann::json& runs = c["runs"];
  const int w0 = 34, w = 22;
  os << "\nshared GPU pool of " << c.value("pool_gpus", 0) << " GPUs\n"
     << std::left << std::setw(w0) << "" << std::right;
  for (const auto& r : runs) os << std::setw(w) << r.value("label", "");
  os << "\n";
  auto row = [&](const char* label, auto cell) {
    os << std::left << std::setw(w0) << label << std::right;
    for (const auto& r : runs) os << std::setw(w) << cell(r);
    os << "\n";
  };
  row("inference SLO attainment",
      [](const auto& r) { return report::FormatFixed(FirstInference(r, "slo_attainment"), 4); });
  row("inference GPU-hours",
      [](const auto& r) { return report::FormatFixed(FirstInference(r, "gpu_hours"), 1); });
  row("training samples (M)",
      [](const auto& r) { return report::FormatFixed(r.value("samples_trained", 0.0) / 1e6, 1); });
  row("training rescales",
      [](const auto& r) { return std::to_string(r.value("training_rescales", 0)); });
  row("  of them for others' peaks",
      [](const auto& r) { return std::to_string(r.value("reclaim_rescales", 0)); });
  row("restart seconds paid",
      [](const auto& r) { return report::FormatFixed(r.value("restart_time_s", 0.0), 0); });
  row("samples lost",
      [](const auto& r) { return report::FormatFixed(r.value("samples_lost", 0.0), 0); });
  row("pool GPU utilization",
      [](const auto& r) { return report::FormatFixed(r.value("pool_utilization", 0.0), 3); });
  if (c.contains("upper_bound_samples")) {
    os << "upper bound (training on every GPU the inference oracle leaves free, no restart cost): "
       << report::FormatFixed(c.value("upper_bound_samples", 0.0) / 1e6, 1) << " M samples\n";
  }
  os << "inference peaks (oracle needs GPUs training holds at full size): "
     << c.value("inference_peaks", 0) << "; rescales for them (shrinks and the regrowths back) "
     << report::FormatFixed(c.value("reclaim_rescales_per_peak", 0.0), 2) << " per peak\n";
  for (const auto& t : c["targets"]) {
    os << (t.value("met", false) ? "  MET      " : "  NOT MET  ") << t.value("target", "") << ": "
       << report::FormatFixed(t.value("value", 0.0), 3) << " (goal "
       << report::FormatFixed(t.value("goal", 0.0), 2) << ")\n";
  }
}

}  // namespace aiscale::cli
