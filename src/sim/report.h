// Report: a ScenarioResult as the report layer's typed Report (report/run_summary.h), judged
// against the scenario's targets, and written out: report.json (report/report_json.h),
// report.html (report/report_html.h) and one decision log per run.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "report/run_summary.h"
#include "sim/report_files.h"
#include "sim/runner.h"

namespace aiscale::sim {

// One run, typed: each workload's summary with its timeline, and the decisions digested.
report::RunSummary Summarize(const RunResult& r);
// Every run summarized, then judged (report/judge.h) against `r.targets`.
report::Report BuildReport(const ScenarioResult& r);
// report.json's document: report::ToJson(BuildReport(r)).
nlohmann::json ReportJson(const ScenarioResult& r);
// The same from a report already built, with the many-tenant comparison (sim/tenant_report.h)
// added under "tenant_comparison" when the scenario has one.
nlohmann::json ReportJson(const ScenarioResult& r, const report::Report& built);
// One ToJson(Decision) per line, in tick order: the golden-file format.
std::string DecisionLogJsonl(const RunResult& r);

struct WrittenReport {
  std::string json_path;
  std::string html_path;
  std::vector<std::string> decision_logs;
};
// Writes report.json, report.html and decisions-<policy>.jsonl into `dir` (created if needed),
// each atomically, with `dir` locked (by `held` when the caller locked it for the whole run,
// else here) and the previous run's leftovers removed (sim/report_files.h). Fails before
// writing anything when two runs' labels map to one decision-log file.
Result<WrittenReport> WriteReport(const ScenarioResult& r, const std::string& dir,
                                  const OutputLock* held = nullptr);
// The same from a report already built (BuildReport(r)), so a caller that also prints it
// builds it once.
Result<WrittenReport> WriteReport(const ScenarioResult& r, const report::Report& built,
                                  const std::string& dir, const OutputLock* held = nullptr);

}  // namespace aiscale::sim
