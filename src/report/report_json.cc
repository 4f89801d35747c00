#include "report/report_json.h"

#include <cmath>

namespace aiscale::report {
namespace {

using nlohmann::json;

json DigestJson(const DecisionDigest& d) {
  json changes = json::array();
  for (const Decision& x : d.shown) changes.push_back(aiscale::ToJson(x));
  return {{"total", d.total},
          {"kept", d.kept},
          {"by_rule", d.by_rule},
          {"by_action", d.by_action},
          {"changes", std::move(changes)},
          {"changes_not_listed", d.not_shown}};
}

json TimelineJson(const RunSummary& r) {
  json timeline = json::array();
  for (const WorkloadSummary& w : r.workloads) {
    for (const TimelinePoint& p : w.timeline) {
      json q = ToJson(p);
      if (r.workloads.size() > 1) q["workload"] = w.name;
      timeline.push_back(std::move(q));
    }
  }
  return timeline;
}

}  // namespace

json ToJson(const Verdict& v) {
  json targets = json::array();
  for (const TargetResult& t : v.targets) {
    json e = {{"name", t.name}, {"measured", t.measured}, {"target", t.target}, {"met", t.met}};
    if (t.required) e["required"] = *t.required;
    if (t.oracle) e["oracle"] = std::isfinite(*t.oracle) ? json(*t.oracle) : json(nullptr);
    targets.push_back(std::move(e));
  }
  json j = {{"targets", std::move(targets)}, {"met_all", v.met_all}};
  if (!v.why_not.empty()) j["why_not"] = v.why_not;
  if (!v.oracle_note.empty()) j["oracle_note"] = v.oracle_note;
  return j;
}

json ToJson(const BaselineVerdict& v) {
  json j = {{"gpu_hours_ratio", v.gpu_hours_ratio},
            {"completion_ratio", v.completion_ratio},
            {"beats_static", v.beats}};
  if (!v.beats) j["why_not"] = v.why_not;
  return j;
}

json ToJson(const RunSummary& r) {
  const WorkloadSummary totals = r.Totals();
  json e = ToJson(totals);
  json workloads = json::array();
  for (const WorkloadSummary& w : r.workloads) {
    json s = ToJson(w);
    s["name"] = w.name;
    if (w.verdict) s["vs_targets"] = ToJson(*w.verdict);
    workloads.push_back(std::move(s));
  }
  e["policy"] = r.label;
  e["policy_name"] = r.policy.empty() ? r.label : r.policy;
  if (r.baseline != Baseline::kNone) e["baseline"] = std::string(BaselineName(r.baseline));
  if (!r.role.empty()) e["role"] = r.role;
  if (!r.pool.is_null()) e["pool"] = r.pool;
  e["cut"] = r.cut;
  e["end_s"] = r.end_s;
  const double rph = r.RescalesPerHour();
  e["rescales_per_hour"] = std::isfinite(rph) ? json(rph) : json(nullptr);
  e["workloads"] = std::move(workloads);
  e["timeline"] = TimelineJson(r);
  e["decisions"] = DigestJson(r.decisions);
  if (r.vs_static) e["vs_static"] = ToJson(*r.vs_static);
  if (r.workloads.size() == 1 && r.workloads[0].verdict) {
    e["vs_targets"] = ToJson(*r.workloads[0].verdict);
  }
  return e;
}

json ToJson(const Report& r) {
  json runs = json::array();
  for (const RunSummary& run : r.runs) runs.push_back(ToJson(run));
  json out = {{"scenario", r.scenario},
              {"file", r.file},
              {"seed", r.seed},
              {"duration_limit_s", r.duration_limit_s},
              {"runs", std::move(runs)}};
  if (!r.pool_comparison.is_null()) out["pool_comparison"] = r.pool_comparison;
  if (r.sweep) out["sweep"] = ToJson(*r.sweep);
  return out;
}

json ToJson(const Sweep& s) {
  // A figure that is not there (a run with no requests) is null, never a 0.
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json families = json::array();
  for (const SweepFamily& f : s.families) {
    json points = json::array();
    for (const SweepPoint& p : f.points) {
      points.push_back({{"label", p.label},
                        {"value", num(p.value)},
                        {"gpu_hours", num(p.gpu_hours)},
                        {"slo_attainment", num(p.slo_attainment)},
                        {"frontier", p.frontier}});
    }
    const int best = s.target > 0 ? CheapestMeeting(f, s.target) : -1;
    families.push_back(
        {{"label", f.label},
         {"policy", f.policy},
         {"knob", f.knob},
         {"points", std::move(points)},
         {"cheapest_meeting_target",
          best < 0 ? json(nullptr) : json(f.points[static_cast<size_t>(best)].label)}});
  }
  json dominance = json::array();
  for (const Dominance& d : s.dominance) {
    dominance.push_back({{"policy", d.policy},
                         {"over", d.over},
                         {"dominates", d.dominates},
                         {"unmatched", d.unmatched}});
  }
  return {{"target_attainment", s.target > 0 ? json(s.target) : json(nullptr)},
          {"families", std::move(families)},
          {"dominance", std::move(dominance)},
          {"notes", s.notes}};
}

}  // namespace aiscale::report
