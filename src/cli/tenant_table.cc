#include "cli/tenant_table.h"

#include <iomanip>
#include <sstream>
#include <string>

#include "report/format.h"

namespace aiscale::cli {
namespace {

double Tenant(const nlohmann::json& run, const std::string& name, const char* key) {
  return run["tenants"].contains(name) ? run["tenants"][name].value(key, 0.0) : 0.0;
}

}  // namespace

void PrintTenantComparison(const nlohmann::json& c, std::ostream& os) {
  const nlohmann::json& runs = c["runs"];
  const int w0 = 34, w = 18;
  os << "\nshared GPU pool of " << c.value("pool_gpus", 0) << " GPUs, " << runs.size()
     << " runs; pending GPU-minutes (demand not held)\n"
     << std::left << std::setw(w0) << "" << std::right;
  for (const auto& r : runs) os << std::setw(w) << r.value("label", "");
  os << "\n";
  auto row = [&](const std::string& label, auto cell) {
    os << std::left << std::setw(w0) << label << std::right;
    for (const auto& r : runs) os << std::setw(w) << cell(r);
    os << "\n";
  };
  if (!runs.empty()) {
    for (const auto& item : runs[0]["tenants"].items()) {
      const std::string name = item.key();
      row("  " + name, [&](const auto& r) {
        return report::FormatFixed(Tenant(r, name, "pending_gpu_minutes"), 0);
      });
    }
  }
  row("pending GPU-minutes, all",
      [](const auto& r) { return report::FormatFixed(r.value("pending_gpu_minutes", 0.0), 0); });
  row("reclaimed GPU-minutes",
      [](const auto& r) { return report::FormatFixed(r.value("reclaimed_gpu_minutes", 0.0), 0); });
  row("longest lent wait, grant (s)",
      [](const auto& r) { return report::FormatFixed(r.value("lent_wait_to_grant_s", 0.0), 0); });
  row("longest lent wait, ready (s)",
      [](const auto& r) { return report::FormatFixed(r.value("lent_wait_to_ready_s", 0.0), 0); });
  row("pool GPU utilization",
      [](const auto& r) { return report::FormatFixed(r.value("pool_utilization", 0.0), 3); });
  for (const auto& t : c["targets"]) {
    if (t.value("stated", false)) {
      os << "  STATED   " << t.value("target", "") << ": "
         << report::FormatFixed(t.value("value", 0.0), 0) << "\n";
      continue;
    }
    os << (t.value("met", false) ? "  MET      " : "  NOT MET  ") << t.value("target", "") << ": "
       << report::FormatFixed(t.value("value", 0.0), 3) << " (goal "
       << report::FormatFixed(t.value("goal", 0.0), 2) << ")\n";
  }
}

}  // namespace aiscale::cli
