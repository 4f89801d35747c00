#include "sim/pool_report.h"

#include <algorithm>

#include "sim/pool_bound.h"

namespace aiscale::sim {
namespace {

double Num(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

bool IsKind(const WorkloadRun& w, const char* kind) { return w.summary.value("kind", "") == kind; }

// One run's figures.
nlohmann::json RunFigures(const RunResult& run) {
  nlohmann::json inference = nlohmann::json::object(), jobs = nlohmann::json::object();
  double samples = 0, lost = 0, restart_s = 0;
  int rescales = 0;
  for (const WorkloadRun& w : run.workloads) {
    if (IsKind(w, "InferenceService")) {
      inference[w.name] = {{"slo_attainment", Num(w.summary, "slo_attainment")},
                           {"slo_target", w.summary["slo"].value("attainment", 0.99)},
                           {"gpu_hours", Num(w.summary, "gpu_hours")}};
    } else if (IsKind(w, "TrainingJob")) {
      const bool done = w.summary.value("completed", false);
      jobs[w.name] = {{"samples_trained", Num(w.summary, "samples_trained")},
                      {"completed", done},
                      {"completion_time_s", done ? Num(w.summary, "completion_time_s") : -1.0},
                      {"rescales", Num(w.summary, "rescales")},
                      {"restart_time_s", Num(w.summary, "restart_time_s")},
                      {"samples_lost", Num(w.summary, "samples_lost")},
                      {"gpu_hours", Num(w.summary, "gpu_hours")}};
      samples += Num(w.summary, "samples_trained");
      lost += Num(w.summary, "samples_lost");
      restart_s += Num(w.summary, "restart_time_s");
      rescales += static_cast<int>(Num(w.summary, "rescales"));
    }
  }
  return {{"label", run.policy},
          {"role", run.role},
          {"inference", inference},
          {"training", jobs},
          {"samples_trained", samples},
          {"samples_lost", lost},
          {"training_rescales", rescales},
          {"restart_time_s", restart_s},
          {"pool_utilization", run.pool.is_null() ? 0.0 : Num(run.pool, "utilization")}};
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
      const nlohmann::json& plan = pool_run.workloads[i].summary["oracle_plan"];
      if (!plan.is_object()) return Status::Invalid("no inference oracle plan in the pool run");
      in.interval_s = plan.value("interval_s", 60.0);
      in.inference = plan["replicas"].get<std::vector<int>>();
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
  const nlohmann::json* plan = nullptr;
  int gpus = 1;
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    const ScenarioWorkload& w = s.workloads[i];
    if (w.kind == "TrainingJob") {
      room -= int64_t{w.spec.max_replicas} * w.spec.pool.gpus_per_replica;
      merge_s = std::max(merge_s, 2 * w.spec.cold_start_s);
    } else if (w.kind == "InferenceService" && i < pool_run.workloads.size() && !plan) {
      plan = &pool_run.workloads[i].summary["oracle_plan"];
      gpus = w.spec.pool.gpus_per_replica;
    }
  }
  if (!plan || !plan->is_object()) return 0;
  return CountPeaks((*plan)["replicas"].get<std::vector<int>>(), plan->value("interval_s", 60.0),
                    gpus, room, merge_s);
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
  out["targets"] = targets;
  return out;
}

}  // namespace aiscale::sim
