// The comparison table as text, and the notes beside it (report/comparison.h).
#include <algorithm>

#include "report/comparison.h"
#include "report/format.h"

namespace aiscale::report {
namespace {

std::string PadLeft(const std::string& s, size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}
std::string PadRight(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

// "P" for a run with one workload, "P (workload W)" with several.
std::string Who(const RunSummary& run, const WorkloadSummary& w) {
  return run.workloads.size() > 1 ? run.label + " (workload " + w.name + ")" : run.label;
}

}  // namespace

std::string RenderText(const ComparisonTable& t) {
  size_t first = 0;
  for (const TableRow& r : t.rows) first = std::max(first, r.label.size());
  first += 2;
  std::vector<size_t> widths;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    size_t w = std::max<size_t>(12, t.columns[c].label.size());
    for (const TableRow& r : t.rows) {
      if (c < r.cells.size()) w = std::max(w, r.cells[c].Text().size());
    }
    widths.push_back(w + 2);
  }
  std::string out = PadRight("", first);
  for (size_t c = 0; c < t.columns.size(); ++c) out += PadLeft(t.columns[c].label, widths[c]);
  out += "\n";
  for (const TableRow& r : t.rows) {
    out += PadRight(r.label, first);
    for (size_t c = 0; c < t.columns.size(); ++c) {
      out += PadLeft(c < r.cells.size() ? r.cells[c].Text() : "", widths[c]);
    }
    out += "\n";
  }
  return out;
}

std::vector<std::string> ComparisonNotes(const Report& r) {
  std::vector<std::string> notes;
  for (const RunSummary& run : r.runs) {
    for (const WorkloadSummary& w : run.workloads) {
      if (w.verdict && !w.verdict->met_all) {
        notes.push_back(Who(run, w) + " misses targets: " + w.verdict->why_not);
      }
    }
  }
  for (const RunSummary& run : r.runs) {
    if (run.vs_static && !run.vs_static->beats) {
      notes.push_back(run.label + " did not beat static: " + run.vs_static->why_not);
    }
  }
  for (const RunSummary& run : r.runs) {
    if (run.cut) {
      notes.push_back(run.label + " was cut at the duration limit (" +
                      FormatFixed(run.end_s / 3600, 1) + " h) before the work was done");
    }
  }
  return notes;
}

}  // namespace aiscale::report
