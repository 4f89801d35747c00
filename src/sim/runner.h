// Runner: runs a Scenario once per policy, each a fresh simulation with the same seed, the
// same failures and the same arrivals, with the real Controller on the queue's SimClock, a
// SimSource and a SimActuator, each workload assembled from its spec and the run's pipeline
// (control::Assemble, as `aiscale run` does); signals are collected as a queue event.
//
// Promises: one Controller tick per control period, as a queue event; the run ends when every
// workload is Done() or at the scenario's duration limit (then `cut` is true). Timelines are
// sampled every report interval; decisions are kept up to `decision_log_limit` per run (the
// count of all of them is kept either way). Deterministic: same scenario and options, same
// result. Single-threaded.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/decision.h"
#include "core/result.h"
#include "report/run_summary.h"
#include "report/targets.h"
#include "sim/run_budget.h"
#include "sim/run_cache.h"
#include "sim/scenario.h"

namespace aiscale::sim {

struct RunProgress {
  std::string policy;
  double sim_s = 0;
  double fraction = 0;    // of the work (or of the duration limit when work has no end)
  bool finished = false;  // the run's last report
};

struct RunOptions {
  std::vector<std::string> policies;  // overrides the scenario's compare list when non-empty
  size_t decision_log_limit = 200000;
  double progress_every_sim_s = 3600;
  std::function<void(const RunProgress&)> on_progress;  // may be empty
  // The run budget (docs/limits.md): past this many simulator events the run ends with an
  // Invalid status naming the limit, instead of running on.
  uint64_t event_limit = kMaxEventsPerRun;
  // What the runs share (the oracle of each inference workload); RunScenario makes one when
  // none is given, so its runs compute it once.
  std::shared_ptr<RunCache> cache;
};

struct WorkloadRun {
  std::string name;
  report::WorkloadSummary summary;              // SimWorkload::Summary(), named
  std::vector<report::TimelinePoint> timeline;  // sampled every report interval
  nlohmann::json figures;                       // SimWorkload::KindFigures()
};

struct RunResult {
  std::string policy;       // the run's label (the policy's name unless the compare entry
                            // gave a label)
  std::string policy_name;  // the first workload's policy, e.g. "hpa" for label "hpa-queue"
  report::Baseline baseline = report::Baseline::kNone;  // PolicyRun::baseline
  std::string role;                                     // PolicyRun::role
  bool cut = false;
  double end_s = 0;
  double wall_s = 0;
  std::vector<WorkloadRun> workloads;
  std::vector<Decision> decisions;
  size_t decisions_total = 0;
  nlohmann::json pool;  // SimPool::Summary() when the run had a shared pool; null otherwise
};

struct ScenarioResult {
  std::string scenario;
  std::string file;
  uint64_t seed = 0;
  double duration_limit_s = 0;
  report::Targets targets;  // the scenario's, for the report's verdicts
  std::vector<RunResult> runs;
  nlohmann::json pool_comparison;      // sim/pool_report.h; null without a pool and roles
  nlohmann::json tenant_comparison;    // sim/tenant_report.h; null without GpuDemand tenants
  std::optional<report::Sweep> sweep;  // sim/sweep.h: set by the caller of a sweep's runs
};

Result<RunResult> RunPolicy(const Scenario& s, const PolicyRun& run, const RunOptions& opt);
Result<ScenarioResult> RunScenario(const Scenario& s, const RunOptions& opt);

}  // namespace aiscale::sim
