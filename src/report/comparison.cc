#include "report/comparison.h"

#include <cmath>

#include "report/format.h"

namespace aiscale::report {
namespace {

enum class Kind { kTraining, kServing, kShared };

// One figure of the table: how to read it from a workload and from the oracle.
struct Metric {
  const char* key;
  const char* label;
  int decimals;
  double (*value)(const WorkloadSummary&);
  double (*oracle)(const WorkloadSummary&);  // null: the oracle has no such figure
  bool ratio;                                // shown against static in the ratio columns
};

double Oracle(const WorkloadSummary& w, double OracleFigures::*f) {
  return w.oracle ? (*w.oracle).*f : kNoValue;
}
double Serving(const WorkloadSummary& w, double ServingFigures::*f) {
  return w.serving ? (*w.serving).*f : kNoValue;
}
double ServingCount(const WorkloadSummary& w, int64_t ServingFigures::*f) {
  return w.serving ? static_cast<double>((*w.serving).*f) : kNoValue;
}
double OverOracle(const WorkloadSummary& w) {
  const double o = Oracle(w, &OracleFigures::gpu_hours);
  return o > 0 ? w.gpu_hours / o : kNoValue;
}
double PerHour(const WorkloadSummary& w) {
  return w.completion_time_s > 0 ? w.rescales / (w.completion_time_s / 3600) : kNoValue;
}
double Hours(double s) { return s / 3600; }

// The figures every kind has.
const Metric kGpuHours = {
    "gpu_hours",
    "GPU-hours",
    1,
    [](const WorkloadSummary& w) { return w.gpu_hours; },
    [](const WorkloadSummary& w) { return Oracle(w, &OracleFigures::gpu_hours); },
    true};
const Metric kOverOracle = {"gpu_hours_over_oracle",
                            "GPU-hours / oracle",
                            2,
                            &OverOracle,
                            [](const WorkloadSummary& w) { return w.oracle ? 1.0 : kNoValue; },
                            false};
const Metric kCost = {"cost_usd", "cost (USD)",
                      0,          [](const WorkloadSummary& w) { return w.cost_usd; },
                      nullptr,    true};
const Metric kUtil = {
    "mean_gpu_util",
    "mean GPU utilization",
    3,
    [](const WorkloadSummary& w) { return w.mean_gpu_util; },
    [](const WorkloadSummary& w) { return Oracle(w, &OracleFigures::mean_gpu_util); },
    true};
const Metric kRescales = {"rescales",
                          "rescales",
                          0,
                          [](const WorkloadSummary& w) { return double(w.rescales); },
                          [](const WorkloadSummary& w) {
                            return w.oracle && w.training ? double(w.oracle->rescales) : kNoValue;
                          },
                          true};

const std::vector<Metric>& Metrics(Kind kind) {
  static const std::vector<Metric> kTraining = {
      kGpuHours,
      kOverOracle,
      {"completion_time_s", "completion time (h)", 2,
       [](const WorkloadSummary& w) { return Hours(w.completion_time_s); },
       [](const WorkloadSummary& w) { return Hours(Oracle(w, &OracleFigures::completion_time_s)); },
       true},
      kUtil,
      kRescales,
      {"rescales_per_hour", "rescales per hour", 2, &PerHour, nullptr, true},
      {"max_failure_replacement_s", "time to replace failed node (s)", 0,
       [](const WorkloadSummary& w) { return w.max_failure_replacement_s; }, nullptr, true},
      kCost,
  };
  static const std::vector<Metric> kServing = {
      kGpuHours,
      kOverOracle,
      kCost,
      {"slo_attainment", "SLO attainment", 4,
       [](const WorkloadSummary& w) { return Serving(w, &ServingFigures::slo_attainment); },
       [](const WorkloadSummary& w) { return Oracle(w, &OracleFigures::attainment); }, false},
      {"latency_p50_s", "latency p50 (s)", 2,
       [](const WorkloadSummary& w) { return Serving(w, &ServingFigures::latency_p50_s); }, nullptr,
       false},
      {"latency_p99_s", "latency p99 (s)", 2,
       [](const WorkloadSummary& w) { return Serving(w, &ServingFigures::latency_p99_s); }, nullptr,
       false},
      {"ttft_p50_s", "TTFT p50 (s)", 2,
       [](const WorkloadSummary& w) { return Serving(w, &ServingFigures::ttft_p50_s); }, nullptr,
       false},
      {"ttft_p99_s", "TTFT p99 (s)", 2,
       [](const WorkloadSummary& w) { return Serving(w, &ServingFigures::ttft_p99_s); }, nullptr,
       false},
      {"requests", "requests", 0,
       [](const WorkloadSummary& w) { return ServingCount(w, &ServingFigures::requests); }, nullptr,
       false},
      {"timed_out", "timed out", 0,
       [](const WorkloadSummary& w) { return ServingCount(w, &ServingFigures::timed_out); },
       nullptr, false},
      {"dropped", "dropped", 0,
       [](const WorkloadSummary& w) { return ServingCount(w, &ServingFigures::dropped); }, nullptr,
       false},
      {"scale_events", "scale events", 0,
       [](const WorkloadSummary& w) { return double(w.rescales); }, nullptr, false},
  };
  static const std::vector<Metric> kShared = {kGpuHours, kCost, kUtil, kRescales};
  return kind == Kind::kTraining ? kTraining : kind == Kind::kServing ? kServing : kShared;
}

// The workloads the table compares: one per run (null where the run lacks it).
struct Column {
  const RunSummary* run;
  WorkloadSummary w;
  bool present;
};

std::vector<Column> Columns(const Report& r, const std::string& workload) {
  std::vector<Column> out;
  for (const RunSummary& run : r.runs) {
    if (workload.empty()) {
      out.push_back({&run, run.Totals(), true});
    } else if (const WorkloadSummary* w = run.Workload(workload)) {
      WorkloadSummary copy = *w;
      copy.timeline.clear();
      out.push_back({&run, std::move(copy), true});
    } else {
      out.push_back({&run, WorkloadSummary{}, false});
    }
  }
  return out;
}

Kind KindOf(const std::vector<Column>& cols) {
  bool training = true, serving = true, any = false;
  for (const Column& c : cols) {
    if (!c.present) continue;
    any = true;
    training = training && c.w.training.has_value();
    serving = serving && c.w.serving.has_value();
  }
  if (!any) return Kind::kShared;
  return training ? Kind::kTraining : serving ? Kind::kServing : Kind::kShared;
}

TableCell Cell(const Metric& m, const Column& c) {
  TableCell cell{c.present ? m.value(c.w) : kNoValue, m.decimals, false, ""};
  // Attainment short of the service's own target is marked.
  if (std::string_view(m.key) == "slo_attainment" && c.w.serving &&
      cell.value < c.w.serving->slo.attainment) {
    cell.bad = true;
  }
  return cell;
}

}  // namespace

std::string TableCell::Text() const {
  if (!text.empty()) return text;
  return std::isnan(value) ? "-" : FormatFixed(value, decimals);
}

ComparisonTable BuildComparison(const Report& r, const std::string& workload) {
  ComparisonTable t;
  t.title = workload.empty() ? "all workloads" : workload;
  const std::vector<Column> cols = Columns(r, workload);
  const Kind kind = KindOf(cols);
  const RunSummary* st = r.FindBaseline(Baseline::kStatic);
  // The oracle is the same for every run (same job, same arrivals): the first one's.
  const Column* oracle = nullptr;
  for (const Column& c : cols) {
    if (!oracle && c.present && c.w.oracle && kind != Kind::kShared) oracle = &c;
  }
  const Column* static_col = nullptr;
  for (size_t i = 0; i < cols.size(); ++i) {
    t.columns.push_back({TableColumn::Kind::kRun, cols[i].run->label, cols[i].run->label, i});
    if (cols[i].run == st && cols[i].present) static_col = &cols[i];
  }
  if (oracle) t.columns.push_back({TableColumn::Kind::kOracle, "oracle", "oracle", 0});
  for (size_t i = 0; static_col && i < cols.size(); ++i) {
    if (&cols[i] == static_col) continue;
    t.columns.push_back(
        {TableColumn::Kind::kRatio, cols[i].run->label + "/static", cols[i].run->label, i});
  }
  for (const Metric& m : Metrics(kind)) {
    TableRow row{m.key, m.label, {}};
    for (const Column& c : cols) row.cells.push_back(Cell(m, c));
    if (oracle) {
      row.cells.push_back({m.oracle ? m.oracle(oracle->w) : kNoValue, m.decimals, false, ""});
    }
    for (size_t i = 0; static_col && i < cols.size(); ++i) {
      if (&cols[i] == static_col) continue;
      const double a = cols[i].present ? m.value(cols[i].w) : kNoValue;
      const double b = m.value(static_col->w);
      row.cells.push_back({m.ratio && b != 0 ? a / b : kNoValue, 3, false, ""});
    }
    t.rows.push_back(std::move(row));
  }
  if (kind == Kind::kTraining) {
    TableRow cut{"cut", "cut at duration limit", {}};
    for (const Column& c : cols)
      cut.cells.push_back({kNoValue, 0, false, c.run->cut ? "yes" : "no"});
    cut.cells.resize(t.columns.size());
    t.rows.push_back(std::move(cut));
  }
  return t;
}

}  // namespace aiscale::report
