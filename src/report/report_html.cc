#include "report/report_html.h"

#include "report/comparison.h"
#include "report/format.h"
#include "report/html_sections.h"
#include "report/page_assets.h"
#include "report/sweep_html.h"

namespace aiscale::report {
namespace {

// Nothing may be fetched: no scripts, styles, images, fonts or frames from anywhere.
constexpr const char* kPolicy =
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">";

std::string Header(const Report& r) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += kPolicy;
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  h += "<title>aiscale report: " + EscapeHtml(r.scenario) + "</title><style>";
  h += PageStyle();
  h += "</style></head><body>\n<h1>aiscale report: " + EscapeHtml(r.scenario) +
       "</h1><p class=\"meta\">";
  if (!r.file.empty()) h += "Scenario file " + EscapeHtml(r.file) + ". ";
  h += "Seed " + std::to_string(r.seed) + ". ";
  if (r.duration_limit_s > 0)
    h += "Duration limit " + FormatFixed(r.duration_limit_s / 3600, 1) + " h. ";
  h += "Hover a chart for values; click a legend entry to hide or show it.</p>\n";
  return h;
}

html::RunViews ViewsOf(const Report& r, const std::string& workload) {
  html::RunViews views;
  for (size_t i = 0; i < r.runs.size(); ++i) {
    if (const WorkloadSummary* w = r.runs[i].Workload(workload))
      views.push_back({&r.runs[i], i, w});
  }
  return views;
}

std::string WorkloadSection(const Report& r, const std::string& name, bool only) {
  const html::RunViews runs = ViewsOf(r, name);
  if (runs.empty()) return "";
  const bool serving = runs.front().w->serving.has_value();
  const std::string kind = runs.front().w->kind.empty() ? "workload" : runs.front().w->kind;
  std::string h = std::string("<section class=\"") + (serving ? "inference" : "training") + "\" " +
                  html::Attr("data-workload", name) + "><h2>" +
                  (serving ? "Inference runs: " : "Training and other runs: ") + EscapeHtml(name) +
                  " (" + EscapeHtml(kind) + ")</h2>";
  const ComparisonTable table = BuildComparison(r, name);
  h += serving ? html::ServingSection(table, runs, only) : html::TrainingSection(table, runs, only);
  return h + "</section>\n";
}

// With several workloads: the runs' totals side by side, and each run against static.
std::string TotalsSection(const Report& r) {
  html::RunViews views;
  std::vector<WorkloadSummary> totals;
  totals.reserve(r.runs.size());
  for (const RunSummary& run : r.runs) totals.push_back(run.Totals());
  for (size_t i = 0; i < r.runs.size(); ++i) {
    totals[i].verdict.reset();
    views.push_back({&r.runs[i], i, &totals[i]});
  }
  return "<section class=\"totals\"><h2>All workloads</h2>" + html::TableHtml(BuildComparison(r)) +
         html::VerdictsHtml(views, true) + "</section>\n";
}

}  // namespace

std::string ReportHtml(const Report& r) {
  std::string h = Header(r);
  const std::vector<std::string> names = r.WorkloadNames();
  if (names.empty()) h += "<p>No runs.</p>\n";
  if (r.sweep) h += SweepSection(*r.sweep);
  if (names.size() > 1) h += TotalsSection(r);
  for (const std::string& name : names) h += WorkloadSection(r, name, names.size() == 1);
  if (!r.runs.empty())
    h += "<section class=\"decision-log\">" + DecisionLogHtml(r, "decisions") + "</section>\n";
  h += "<script>";
  h += PageScript();
  return h + "</script>\n</body></html>\n";
}

}  // namespace aiscale::report
