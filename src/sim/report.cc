#include "sim/report.h"

#include <filesystem>
#include <optional>
#include <sstream>

#include "report/judge.h"
#include "report/report_html.h"
#include "report/report_json.h"

namespace aiscale::sim {

report::RunSummary Summarize(const RunResult& r) {
  report::RunSummary s;
  s.label = r.policy;
  s.policy = r.policy_name.empty() ? r.policy : r.policy_name;
  s.baseline = r.baseline;
  s.role = r.role;
  s.pool = r.pool;
  s.cut = r.cut;
  s.end_s = r.end_s;
  for (const WorkloadRun& w : r.workloads) {
    report::WorkloadSummary ws = w.summary;
    ws.name = w.name;
    ws.timeline = w.timeline;
    s.workloads.push_back(std::move(ws));
  }
  s.decisions = report::DigestDecisions(r.decisions, r.decisions_total);
  return s;
}

report::Report BuildReport(const ScenarioResult& r) {
  report::Report out;
  out.scenario = r.scenario;
  out.file = r.file;
  out.seed = r.seed;
  out.duration_limit_s = r.duration_limit_s;
  for (const RunResult& run : r.runs) out.runs.push_back(Summarize(run));
  out.pool_comparison = r.pool_comparison;
  out.sweep = r.sweep;
  report::Judge(out, r.targets);
  return out;
}

nlohmann::json ReportJson(const ScenarioResult& r, const report::Report& built) {
  nlohmann::json out = report::ToJson(built);
  if (!r.tenant_comparison.is_null()) out["tenant_comparison"] = r.tenant_comparison;
  return out;
}

nlohmann::json ReportJson(const ScenarioResult& r) { return ReportJson(r, BuildReport(r)); }

std::string DecisionLogJsonl(const RunResult& r) {
  std::ostringstream os;
  // Names and labels are checked for UTF-8 at input; `replace` keeps anything that slipped
  // past that from throwing while a run's results are written (a crash would lose them).
  for (const Decision& d : r.decisions)
    os << ToJson(d).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return os.str();
}

Result<WrittenReport> WriteReport(const ScenarioResult& r, const std::string& dir,
                                  const OutputLock* held) {
  return WriteReport(r, BuildReport(r), dir, held);
}

Result<WrittenReport> WriteReport(const ScenarioResult& r, const report::Report& built,
                                  const std::string& dir, const OutputLock* held) {
  namespace fs = std::filesystem;
  std::vector<std::string> labels;
  for (const auto& run : r.runs) labels.push_back(run.policy);
  RETURN_IF_ERROR(CheckDecisionLogNames(labels));
  std::optional<OutputLock> own;
  if (held == nullptr) {
    auto lock = OutputLock::Acquire(dir);
    if (!lock.ok()) return lock.status();
    own.emplace(std::move(*lock));
    held = &*own;
  }
  WrittenReport out;
  std::vector<std::string> names = {"report.json", "report.html"};
  const fs::path base(dir);
  out.json_path = (base / "report.json").string();
  out.html_path = (base / "report.html").string();
  RETURN_IF_ERROR(WriteFileAtomic(
      out.json_path,
      ReportJson(r, built).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  RETURN_IF_ERROR(WriteFileAtomic(out.html_path, report::ReportHtml(built)));
  for (const auto& run : r.runs) {
    names.push_back(DecisionLogFileName(run.policy));
    const std::string p = (base / names.back()).string();
    RETURN_IF_ERROR(WriteFileAtomic(p, DecisionLogJsonl(run)));
    out.decision_logs.push_back(p);
  }
  RETURN_IF_ERROR(ReplaceManifest(*held, names));
  return out;
}

}  // namespace aiscale::sim
