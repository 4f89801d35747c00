// ComparisonTable: the runs of a scenario side by side, defined once and drawn twice: as text
// by `aiscale simulate` (RenderText) and as HTML in report.html (report/report_html.h).
//
// One row per figure, one column per run, then the offline oracle's column where the workload
// has one, then one "<run>/static" ratio column per run when the scenario ran the static
// baseline. Which figures: a training table for training workloads, a serving table for
// inference services, the shared figures (GPU-hours, cost, utilization, rescales) for the
// totals of several workloads. A figure a run does not have is "-", never 0. Pure.
#pragma once

#include <string>
#include <vector>

#include "report/run_summary.h"

namespace aiscale::report {

struct TableCell {
  double value = kNoValue;  // NaN: "-"
  int decimals = 0;
  bool bad = false;  // short of its target (e.g. SLO attainment below the service's)
  std::string text;  // shown instead of the number when set ("yes", "no")
  std::string Text() const;
};

struct TableColumn {
  enum class Kind { kRun, kOracle, kRatio };
  Kind kind = Kind::kRun;
  std::string label;  // the header
  std::string run;    // the run's label (kRun, kRatio); "oracle" for the oracle
  size_t index = 0;   // the run's place in Report::runs, for its colour
};

struct TableRow {
  std::string key;  // the figure's report.json name, e.g. "gpu_hours"
  std::string label;
  std::vector<TableCell> cells;  // one per column
};

struct ComparisonTable {
  std::string title;
  std::vector<TableColumn> columns;
  std::vector<TableRow> rows;
};

// The table for `workload` across every run of `r`, or, when `workload` is empty, for each
// run's totals (the one workload's figures when runs have one workload).
ComparisonTable BuildComparison(const Report& r, const std::string& workload = "");

// One line per thing a reader must not miss: a run that misses its targets or did not beat
// static (with why), and a run cut at the duration limit.
std::vector<std::string> ComparisonNotes(const Report& r);

// The table as aligned plain text, one line per row, with a header line.
std::string RenderText(const ComparisonTable& t);

}  // namespace aiscale::report
