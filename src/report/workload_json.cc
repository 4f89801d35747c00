// report.json's workload summaries and timeline points (report/report_json.h).
#include <cmath>

#include "report/report_json.h"

namespace aiscale::report {
namespace {

using nlohmann::json;

// A figure as JSON: null when it was not measured (NaN), never 0.
json Figure(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

void PutIfFinite(json& j, const char* key, double v) {
  if (std::isfinite(v)) j[key] = v;
}

json PlanJson(const OracleFigures& o) {
  json plan = {{"interval_s", o.plan.interval_s}, {"replicas", json::array()}};
  for (double n : o.plan.replicas) {
    plan["replicas"].push_back(std::isfinite(n) ? json(static_cast<int64_t>(n)) : json(nullptr));
  }
  if (!o.steps.empty()) {
    json steps = json::array();
    for (const OraclePlanStep& s : o.steps) {
      steps.push_back(
          {{"phase", s.phase}, {"nodes", s.nodes}, {"start_s", s.start_s}, {"seconds", s.seconds}});
    }
    plan["phases"] = std::move(steps);
  }
  if (o.plan.truncated) plan["truncated"] = true;
  return plan;
}

void PutOracle(const WorkloadSummary& w, json& j) {
  if (!w.oracle) {
    if (!w.oracle_error.empty()) j["oracle_error"] = w.oracle_error;
    return;
  }
  const OracleFigures& o = *w.oracle;
  j["oracle_feasible"] = o.feasible;
  PutIfFinite(j, "oracle_gpu_hours", o.gpu_hours);
  if (!o.note.empty()) j["oracle_note"] = o.note;
  PutIfFinite(j, "oracle_attainment", o.attainment);
  PutIfFinite(j, "oracle_interval_gpu_hours", o.interval_gpu_hours);
  PutIfFinite(j, "oracle_work_gpu_hours", o.work_gpu_hours);
  PutIfFinite(j, "oracle_completion_time_s", o.completion_time_s);
  PutIfFinite(j, "oracle_lower_bound_gpu_hours", o.lower_bound_gpu_hours);
  PutIfFinite(j, "oracle_mean_gpu_util", o.mean_gpu_util);
  if (w.training) j["oracle_rescales"] = o.rescales;
  PutIfFinite(j, "oracle_static_gpu_hours", o.static_gpu_hours);
  PutIfFinite(j, "oracle_static_completion_time_s", o.static_completion_time_s);
  PutIfFinite(j, "oracle_deadline_s", o.deadline_s);
  j["oracle_plan"] = PlanJson(o);
  j["gpu_hours_over_oracle"] = o.gpu_hours > 0 ? w.gpu_hours / o.gpu_hours : 0.0;
}

void PutServing(const ServingFigures& s, json& j) {
  j["requests"] = s.requests;
  j["completed"] = s.completed;
  j["within_slo"] = s.within_slo;
  j["slo_attainment"] = Figure(s.slo_attainment);
  j["latency_p50_s"] = Figure(s.latency_p50_s);
  j["latency_p99_s"] = Figure(s.latency_p99_s);
  j["ttft_p50_s"] = Figure(s.ttft_p50_s);
  j["ttft_p99_s"] = Figure(s.ttft_p99_s);
  j["timed_out"] = s.timed_out;
  j["dropped"] = s.dropped;
  j["ready_replica_hours"] = Figure(s.ready_replica_hours);
  j["cold_start_s"] = Figure(s.cold_start_s);
  j["slo"] = {{"ttft_s", Figure(s.slo.ttft_s)},
              {"latency_s", Figure(s.slo.latency_s)},
              {"attainment", Figure(s.slo.attainment)}};
  j["trace"] = s.trace;
  if (!s.trace_error.empty()) j["trace_error"] = s.trace_error;
  if (s.static_peak_replicas) j["static_peak_replicas"] = *s.static_peak_replicas;
  if (s.warm) {
    j["gpu_hours_awake"] = s.warm->gpu_hours_awake;
    j["gpu_hours_asleep"] = s.warm->gpu_hours_asleep;
    j["asleep_cost_fraction"] = s.warm->asleep_cost_fraction;
    j["wake_s"] = s.warm->wake_s;
  }
}

void PutTraining(const TrainingFigures& t, json& j) {
  j["model"] = t.model;
  j["completed"] = t.completed;
  j["policy_rescales"] = t.policy_rescales;
  j["restarts"] = t.restarts;
  j["restart_time_s"] = t.restart_time_s;
  j["failures"] = t.failures;
  j["steps"] = t.steps;
  j["samples_trained"] = t.samples_trained;
  j["samples_lost"] = t.samples_lost;
  j["epochs_completed"] = t.epochs_completed;
  j["phase_time_s"] = {{"load", t.load_s}, {"compute", t.compute_s}, {"eval", t.eval_s}};
}

void PutEvents(const std::vector<RunEvent>& events, json& j) {
  json rescales = json::array(), failures = json::array();
  for (const RunEvent& e : events) {
    if (e.kind == RunEvent::Kind::kRescale) {
      rescales.push_back({{"t_s", e.t_s}, {"from", e.from}, {"to", e.to}});
      if (e.replacement) rescales.back()["replacement"] = true;
    } else {
      failures.push_back({{"t_s", e.t_s},
                          {"node", e.node},
                          {"size_before", e.from},
                          {"replacement_s", e.replacement_s},
                          {"replaced", e.replaced}});
    }
  }
  j["rescale_events"] = std::move(rescales);
  j["failure_events"] = std::move(failures);
}

}  // namespace

json ToJson(const WorkloadSummary& w) {
  json j = json::object();
  if (!w.kind.empty()) j["kind"] = w.kind;
  j["gpu_hours"] = w.gpu_hours;
  j["cost_usd"] = w.cost_usd;
  if (w.spot_cost_usd) j["spot_cost_usd"] = *w.spot_cost_usd;
  j["completion_time_s"] = Figure(w.completion_time_s);
  j["mean_gpu_util"] = Figure(w.mean_gpu_util);
  j["rescales"] = w.rescales;
  j["max_failure_replacement_s"] = w.max_failure_replacement_s;
  if (w.serving) {
    PutServing(*w.serving, j);
    j["scale_events"] = w.rescales;
  }
  if (w.training) PutTraining(*w.training, j);
  if (w.training || !w.events.empty()) PutEvents(w.events, j);
  PutOracle(w, j);
  return j;
}

json ToJson(const TimelinePoint& p) {
  json j = json::object();
  for (const TimelineField& f : kTimelineFields) {
    const double v = p.*f.member;
    if (!std::isfinite(v)) continue;
    if (v == std::trunc(v) && std::abs(v) < 9e15) {
      j[std::string(f.key)] = static_cast<int64_t>(v);
    } else {
      j[std::string(f.key)] = v;
    }
  }
  return j;
}

}  // namespace aiscale::report
