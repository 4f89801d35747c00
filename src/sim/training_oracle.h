// Training oracle: the schedule of node counts that minimizes GPU-hours for one training job,
// with perfect knowledge of its phases, its throughput at every size, the restart cost, the
// provisioning delay and the failure times, under the policy's own rules (docs/training-
// oracle.md): completion <= (1 + max_slowdown) x the static run's, and the same rescale budget
// (token bucket, min dwell).
//
// Method: the job's phases in order (initial load, compute stretches, evals, reloads) are the
// stages of a dynamic program over (phase, size, rescales used); a Lagrange multiplier on time
// turns the deadline into a price, found by bisection. The smallest multiplier whose schedule
// meets the deadline gives the plan; the best Lagrangian value over all multipliers tried,
// less multiplier x deadline, is a lower bound on any schedule under the same rules, including
// ones that change size inside a phase. An exact label search over (phase, size, rescales),
// bounded by that schedule's cost, then finds the optimum per phase. Sizes are those the
// policy may choose: multiples of the granularity in [min_replicas, the initial size].
// Deterministic, single-threaded; O(phases x sizes^2 x budget) per multiplier.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/result.h"
#include "core/signal.h"
#include "report/run_summary.h"
#include "sim/training_model.h"

namespace aiscale::sim {

// What the oracle needs besides the job: the sizes and rules a policy would be held to.
struct TrainingOracleSettings {
  int min_replicas = 1;
  int max_replicas = 100;
  int granularity = 1;
  double max_slowdown = 0.10;
  double rescales_per_hour = 1;
  double rescale_burst = 2;
  double min_dwell_s = 900;

  // From a workload node (constraints, and the `training` policy's budget when it is the
  // workload's policy; defaults otherwise). Errors are not recorded: the run parses these
  // fields itself and reports them there.
  static TrainingOracleSettings FromWorkload(const config::ConfigNode& workload);
};

struct TrainingOracleInput {
  TrainingJobConfig job;
  TrainingOracleSettings rules;
  int gpus_per_node = 8;
  double gpu_memory_gb = 80;
  int initial_replicas = 1;  // the static run's size; the oracle starts there too
  int cluster_nodes = 1000000;
  double provisioning_s = 0;
  std::vector<double> failure_s;  // failure times, seconds from the start
  double duration_limit_s = 0;    // 0: none
};

struct OraclePhase {
  signals::Phase phase = signals::Phase::kCompute;
  double work = 0;  // GB (load), steps (compute), samples (eval)
};

struct OraclePlanStep {
  signals::Phase phase = signals::Phase::kCompute;
  int nodes = 0;
  double start_s = 0;  // when the phase begins (after the restart of a change, if any)
  double seconds = 0;  // its length at that size
};

struct TrainingOracleResult {
  bool feasible = true;
  std::string why;  // when infeasible, or a note (budget 0, dwell longer than the job)
  double gpu_hours = 0;
  double completion_s = 0;
  double lower_bound_gpu_hours = 0;  // Lagrangian dual bound, <= gpu_hours
  double mean_gpu_util = 0;
  int rescales = 0;
  double static_gpu_hours = 0;  // the same model at the initial size throughout
  double static_completion_s = 0;
  double deadline_s = 0;
  std::vector<OraclePlanStep> plan;

  // The report's oracle figures, with the plan as nodes every `interval_s` (for the chart).
  report::OracleFigures ToFigures(double interval_s) const;
};

// The job's phases in the order the simulated job runs them (training_job.cc's NextPhase).
std::vector<OraclePhase> JobPhases(const TrainingJobConfig& job);

// Invalid input (no allowed size, initial size outside the cluster) is an error; an
// unreachable deadline is a result with feasible = false and why.
Result<TrainingOracleResult> ComputeTrainingOracle(const TrainingOracleInput& in);

}  // namespace aiscale::sim
