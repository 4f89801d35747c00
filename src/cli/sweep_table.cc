#include "cli/sweep_table.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace aiscale::cli {
namespace {

std::string Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

void PrintSweep(const report::Sweep& s, std::ostream& os) {
  char line[256];
  std::snprintf(line, sizeof line, "%-40s %10s %14s  %s\n", "run", "GPU-hours", "SLO attainment",
                "frontier");
  os << line;
  for (const report::SweepFamily& f : s.families) {
    for (const report::SweepPoint& p : f.points) {
      std::snprintf(line, sizeof line, "%-40s %10s %14s  %s\n", p.label.c_str(),
                    Fixed(p.gpu_hours, 1).c_str(), Fixed(p.slo_attainment, 4).c_str(),
                    p.frontier ? "*" : "");
      os << line;
    }
  }
  os << "\n";
  for (const report::SweepFamily& f : s.families) {
    if (s.target <= 0) break;
    os << f.label << ": " << report::CheapestLine(f, s.target) << "\n";
  }
  for (const report::Dominance& d : s.dominance) {
    os << d.policy << (d.dominates ? " dominates " : " does not dominate ") << d.over;
    if (!d.unmatched.empty()) {
      os << " (unmatched:";
      for (size_t i = 0; i < d.unmatched.size(); ++i) os << (i ? ", " : " ") << d.unmatched[i];
      os << ")";
    }
    os << "\n";
  }
  for (const std::string& n : s.notes) os << "note: " << n << "\n";
}

}  // namespace aiscale::cli
