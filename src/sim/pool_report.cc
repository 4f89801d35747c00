#include "sim/pool_report.h"

#include <algorithm>
#include <cmath>

#include "sim/pool_bound.h"

namespace aiscale::sim {
namespace {

double Num(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

// One run's figures, from its workloads' typed summaries.
nlohmann::json RunFigures(const RunResult& run) {
  nlohmann::json inference = nlohmann::json::object(), jobs = nlohmann::json::object();
  double samples = 0, lost = 0, restart_s = 0;
  int rescales = 0, reclaim_rescales = 0;
  for (const WorkloadRun& w : run.workloads) {
    const report::WorkloadSummary& s = w.summary;
    if (s.serving) {
      const double target = s.serving->slo.attainment;
      inference[w.name] = {{"slo_attainment", s.serving->slo_attainment},
                           {"slo_target", std::isnan(target) ? 0.99 : target},
                           {"gpu_hours", s.gpu_hours}};
    } else if (s.training) {
      const report::TrainingFigures& t = *s.training;
      jobs[w.name] = {{"samples_trained", t.samples_trained},
                      {"completed", t.completed},
                      {"completion_time_s", t.completed ? s.completion_time_s : -1.0},
                      {"rescales", s.rescales},
                      {"reclaim_rescales", ReclaimRescales(s.events)},
                      {"restart_time_s", t.restart_time_s},
                      {"samples_lost", t.samples_lost},
                      {"gpu_hours", s.gpu_hours}};
      samples += t.samples_trained;
      lost += t.samples_lost;
      restart_s += t.restart_time_s;
      rescales += s.rescales;
      reclaim_rescales += ReclaimRescales(s.events);
    }
  }
  return {{"label", run.policy},
          {"role", run.role},
          {"inference", inference},
          {"training", jobs},
          {"samples_trained", samples},
          {"samples_lost", lost},
          {"training_rescales", rescales},
          {"reclaim_rescales", reclaim_rescales},
          {"restart_time_s", restart_s},
          {"pool_utilization", run.pool.is_null() ? 0.0 : Num(run.pool, "utilization")}};
}

// The inference oracle's plan of a workload's run (replicas per interval), or null.
const report::OraclePlan* PlanOf(const WorkloadRun& w) {
  return w.summary.serving && w.summary.oracle ? &w.summary.oracle->plan : nullptr;
}

std::vector<int> Replicas(const report::OraclePlan& plan) {
  std::vector<int> out;
  out.reserve(plan.replicas.size());
  for (double n : plan.replicas) out.push_back(static_cast<int>(n));
  return out;
}

const RunResult* ByRole(const ScenarioResult& r, const char* role) {
  for (const RunResult& run : r.runs) {
    if (run.role == role) return &run;
  }
  return nullptr;
}

// The first inference service's attainment in a run (the mixed pools have one).
double Attainment(const nlohmann::json& figures) {
  for (const auto& [name, f] : figures["inference"].items()) return Num(f, "slo_attainment");
  return 0;
}

Result<PoolBoundResult> Bound(const Scenario& s, const RunResult& pool_run) {
  PoolBoundInput in;
  in.pool_gpus = s.pool->size.value_or(0);
  in.cluster = s.cluster;
  in.duration_s = pool_run.end_s;
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    const ScenarioWorkload& w = s.workloads[i];
    if (w.kind == "TrainingJob") {
      in.jobs.push_back({w.name, TrainingJobConfig::Parse(w.node.Child("job")), w.spec.min_replicas,
                         w.spec.max_replicas});
    } else if (w.kind == "InferenceService" && i < pool_run.workloads.size()) {
      const report::OraclePlan* plan = PlanOf(pool_run.workloads[i]);
      if (!plan) return Status::Invalid("no inference oracle plan in the pool run");
      in.interval_s = plan->interval_s > 0 ? plan->interval_s : 60.0;
      in.inference = Replicas(*plan);
      in.inference_gpus = w.spec.pool.gpus_per_replica;
    }
  }
  return ComputePoolBound(in);
}

// Peaks of the pool run's inference oracle against the room training leaves at full size;
// peaks closer than twice the longest training restart count as one.
int Peaks(const Scenario& s, const RunResult& pool_run) {
  int64_t room = s.pool->size.value_or(0);
  double merge_s = 0;
  const report::OraclePlan* plan = nullptr;
  int gpus = 1;
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    const ScenarioWorkload& w = s.workloads[i];
    if (w.kind == "TrainingJob") {
      room -= int64_t{w.spec.max_replicas} * w.spec.pool.gpus_per_replica;
      merge_s = std::max(merge_s, 2 * w.spec.cold_start_s);
    } else if (w.kind == "InferenceService" && i < pool_run.workloads.size() && !plan) {
      plan = PlanOf(pool_run.workloads[i]);
      gpus = w.spec.pool.gpus_per_replica;
    }
  }
  if (!plan) return 0;
  return CountPeaks(Replicas(*plan), plan->interval_s > 0 ? plan->interval_s : 60.0, gpus, room,
                    merge_s);
}

nlohmann::json Target(const std::string& what, double value, double goal, bool met) {
  return {{"target", what}, {"value", value}, {"goal", goal}, {"met", met}};
}

}  // namespace

int CountPeaks(const std::vector<int>& replicas, double interval_s, int gpus_per_replica,
               int64_t room, double merge_s) {
  int peaks = 0;
  double last_end = -1e300;
  bool in_peak = false;
  for (size_t k = 0; k < replicas.size(); ++k) {
    const bool over = int64_t{replicas[k]} * gpus_per_replica > room;
    const double t = static_cast<double>(k) * interval_s;
    if (over && !in_peak && t - last_end > merge_s) ++peaks;
    if (!over && in_peak) last_end = t;
    in_peak = over;
  }
  return peaks;
}

int ReclaimRescales(const std::vector<report::RunEvent>& events) {
  int count = 0, owed = 0;
  for (const report::RunEvent& e : events) {
    if (e.kind != report::RunEvent::Kind::kRescale || e.replacement) continue;
    if (e.to < e.from) {
      ++count;
      owed = std::max(owed, e.from);
    } else if (owed > 0) {
      ++count;
      if (e.to >= owed) owed = 0;
    }
  }
  return count;
}

nlohmann::json PoolComparison(const Scenario& s, const ScenarioResult& r) {
  const RunResult* pool = ByRole(r, "pool");
  if (!s.pool || !pool) return nullptr;
  nlohmann::json runs = nlohmann::json::array();
  for (const RunResult& run : r.runs) runs.push_back(RunFigures(run));
  const nlohmann::json mine = RunFigures(*pool);
  nlohmann::json out = {{"pool_gpus", s.pool->size.value_or(0)}, {"runs", runs}};
  nlohmann::json targets = nlohmann::json::array();
  const double samples = Num(mine, "samples_trained");
  for (const auto& [role, goal] :
       {std::pair<const char*, double>{"static_partition", 1.3}, {"whole_job", 1.15}}) {
    if (const RunResult* other = ByRole(r, role)) {
      const double base = Num(RunFigures(*other), "samples_trained");
      const double ratio = base > 0 ? samples / base : 0;
      targets.push_back(Target(std::string("goodput / ") + role, ratio, goal, ratio >= goal));
    }
  }
  if (auto b = Bound(s, *pool); b.ok()) {
    out["upper_bound_samples"] = b->samples_trained;
    const double ratio = b->samples_trained > 0 ? samples / b->samples_trained : 0;
    targets.push_back(Target("goodput / upper bound", ratio, 0.85, ratio >= 0.85));
  } else {
    out["upper_bound_error"] = b.status().message();
  }
  const double slo = Attainment(mine);
  targets.push_back(Target("inference SLO attainment", slo, 0.99, slo >= 0.99));
  if (const RunResult* alone = ByRole(r, "alone")) {
    const double gap = Attainment(RunFigures(*alone)) - slo;
    targets.push_back(Target("SLO points below the service alone", gap * 100, 0.2, gap <= 0.002));
  }
  targets.push_back(
      Target("samples lost", Num(mine, "samples_lost"), 0, Num(mine, "samples_lost") == 0));
  const int peaks = Peaks(s, *pool);
  out["inference_peaks"] = peaks;
  const double per_peak = Num(mine, "training_rescales") / std::max(1, peaks);
  targets.push_back(Target("training rescales per inference peak", per_peak, 2, per_peak <= 2));
  out["reclaim_rescales_per_peak"] = Num(mine, "reclaim_rescales") / std::max(1, peaks);
  out["targets"] = targets;
  return out;
}

}  // namespace aiscale::sim
