#include "sim/report.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "sim/inference_verdict.h"
#include "sim/json_fields.h"
#include "sim/report_html.h"
#include "sim/training_verdict.h"

namespace aiscale::sim {
namespace {

// How many scaling decisions (action != none) a run entry lists in full.
constexpr size_t kDecisionChangesKept = 500;

double Num(const nlohmann::json& j, const char* key) { return NumberOr(j, key, 0.0); }

nlohmann::json DecisionSummary(const RunResult& r) {
  std::map<std::string, int> by_rule, by_action;
  nlohmann::json changes = nlohmann::json::array();
  for (const Decision& d : r.decisions) {
    ++by_rule[d.recommendation.rule.empty() ? "(none)" : d.recommendation.rule];
    ++by_action[std::string(ActionName(d.action))];
    if (d.action != Action::kNone && changes.size() < kDecisionChangesKept) {
      changes.push_back(ToJson(d));
    }
  }
  return {{"total", r.decisions_total},
          {"kept", r.decisions.size()},
          {"by_rule", by_rule},
          {"by_action", by_action},
          {"changes", changes}};
}

}  // namespace

nlohmann::json RunEntry(const RunResult& r) {
  nlohmann::json e = nlohmann::json::object();
  nlohmann::json workloads = nlohmann::json::array();
  nlohmann::json timeline = nlohmann::json::array();
  for (const auto& w : r.workloads) {
    nlohmann::json s = w.summary;
    s["name"] = w.name;
    workloads.push_back(s);
    for (const auto& p : w.timeline) {
      nlohmann::json q = p;
      if (r.workloads.size() > 1) q["workload"] = w.name;
      timeline.push_back(std::move(q));
    }
  }
  if (r.workloads.size() == 1) {
    e = r.workloads[0].summary;
  } else {
    double gpu_h = 0, util_w = 0, completion = 0, replace = 0, cost = 0;
    int rescales = 0;
    for (const auto& w : r.workloads) {
      const double g = Num(w.summary, "gpu_hours");
      gpu_h += g;
      cost += Num(w.summary, "cost_usd");
      util_w += g * Num(w.summary, "mean_gpu_util");
      completion = std::max(completion, Num(w.summary, "completion_time_s"));
      replace = std::max(replace, Num(w.summary, "max_failure_replacement_s"));
      rescales += static_cast<int>(Num(w.summary, "rescales"));
    }
    e = {{"gpu_hours", gpu_h},
         {"cost_usd", cost},
         {"completion_time_s", completion},
         {"mean_gpu_util", gpu_h > 0 ? util_w / gpu_h : 0.0},
         {"rescales", rescales},
         {"max_failure_replacement_s", replace}};
  }
  // The keys every consumer relies on exist whatever the workload kind reported.
  for (const char* k :
       {"gpu_hours", "completion_time_s", "mean_gpu_util", "max_failure_replacement_s"}) {
    if (!e.contains(k)) e[k] = 0.0;
  }
  if (!e.contains("rescales")) e["rescales"] = 0;
  e["policy"] = r.policy;
  if (!r.role.empty()) e["role"] = r.role;
  e["policy_name"] = r.policy_name.empty() ? r.policy : r.policy_name;
  e["cut"] = r.cut;
  e["end_s"] = r.end_s;
  const double hours = Num(e, "completion_time_s") / 3600.0;
  e["rescales_per_hour"] = hours > 0 ? Num(e, "rescales") / hours : 0.0;
  e["workloads"] = workloads;
  e["timeline"] = timeline;
  e["decisions"] = DecisionSummary(r);
  if (!r.pool.is_null()) e["pool"] = r.pool;
  return e;
}

namespace {

// Says, from the run's own figures and decision counts, whether a policy beat `static` on
// GPU-hours without losing more than 10% speed, and if not, what held it back.
nlohmann::json CompareToStatic(const nlohmann::json& run, const nlohmann::json& st) {
  const double g = Num(run, "gpu_hours"), gs = Num(st, "gpu_hours");
  const double t = Num(run, "completion_time_s"), ts = Num(st, "completion_time_s");
  nlohmann::json c = {{"gpu_hours_ratio", gs > 0 ? g / gs : 0.0},
                      {"completion_ratio", ts > 0 ? t / ts : 0.0}};
  const bool cheaper = gs > 0 && g < 0.99 * gs;
  const bool fast_enough = ts <= 0 || t <= 1.10 * ts;
  c["beats_static"] = cheaper && fast_enough;
  if (cheaper && fast_enough) return c;
  std::ostringstream why;
  why << std::fixed << std::setprecision(3);
  if (!cheaper) why << "GPU-hours " << (gs > 0 ? g / gs : 0.0) << "x static (not below 0.99x)";
  if (!fast_enough) {
    why << (cheaper ? "" : "; ") << "completion " << t / ts << "x static (over 1.10x)";
  }
  why << "; " << static_cast<int>(Num(run, "rescales")) << " rescales; decisions by rule:";
  const auto by_rule = run["decisions"]["by_rule"];
  std::vector<std::pair<int, std::string>> rules;
  for (auto it = by_rule.begin(); it != by_rule.end(); ++it) {
    rules.push_back({it.value().get<int>(), it.key()});
  }
  std::sort(rules.rbegin(), rules.rend());
  for (size_t i = 0; i < rules.size() && i < 4; ++i) {
    why << (i ? "," : "") << " " << rules[i].second << " " << rules[i].first;
  }
  c["why_not"] = why.str();
  return c;
}

}  // namespace

nlohmann::json ReportJson(const ScenarioResult& r) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : r.runs) runs.push_back(RunEntry(run));
  const nlohmann::json* st = nullptr;
  for (const auto& e : runs) {
    if (e.value("policy", "") == "static") st = &e;
  }
  if (st) {
    const nlohmann::json base = *st;
    for (auto& e : runs) {
      if (e.value("policy", "") != "static") e["vs_static"] = CompareToStatic(e, base);
    }
  }
  const std::vector<nlohmann::json> all(runs.begin(), runs.end());
  for (auto& e : runs) {
    if (e.value("policy", "") == "static-peak") continue;
    if (nlohmann::json v = InferenceVerdict(e, all); !v.is_null()) e["vs_targets"] = v;
    if (nlohmann::json v = TrainingVerdict(e, all, r.scenario); !v.is_null()) e["vs_targets"] = v;
  }
  nlohmann::json out = {{"scenario", r.scenario},
                        {"file", r.file},
                        {"seed", r.seed},
                        {"duration_limit_s", r.duration_limit_s},
                        {"runs", runs}};
  if (!r.pool_comparison.is_null()) out["pool_comparison"] = r.pool_comparison;
  return out;
}

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
  const nlohmann::json j = ReportJson(r);
  const fs::path base(dir);
  out.json_path = (base / "report.json").string();
  out.html_path = (base / "report.html").string();
  RETURN_IF_ERROR(WriteFileAtomic(
      out.json_path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  RETURN_IF_ERROR(WriteFileAtomic(out.html_path, ReportHtml(j)));
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
