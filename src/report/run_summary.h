// RunSummary: the typed result of one simulated run (one policy over every workload of a
// scenario), as the report layer reads it: whole-run figures per workload, their timelines,
// the offline oracle's figures, the decisions worth showing, and the verdicts.
//
// Why: the simulator's results used to be JSON objects read back by string key, where a
// missing key read as a silent 0. Here every figure is a field; a figure a workload kind does
// not have is NaN (or an empty optional), shown as "-" and never as 0. report.json is written
// from these types (report/summary_json.h), never read back.
//
// Plain values; no invariants beyond the comments. Built by one thread, then read-only.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/decision.h"
#include "report/frontier.h"
#include "report/timeline.h"
#include "report/verdict.h"

namespace aiscale::report {

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// Whether a run is a baseline of the comparison. Baselines are found by this, never by label.
enum class Baseline {
  kNone,        // a policy under test
  kStatic,      // every workload at its configured size: the training baseline
  kStaticPeak,  // every workload at its trace's peak need: the serving baseline
};
std::string_view BaselineName(Baseline r);

// The offline oracle's plan: replicas (nodes) at the start of every interval.
struct OraclePlan {
  double interval_s = 0;
  std::vector<double> replicas;
  bool truncated = false;  // cut at the timeline-point limit (docs/limits.md)
};

// One step of a training oracle's phase-sized plan.
struct OraclePlanStep {
  std::string phase;
  int nodes = 0;
  double start_s = 0;
  double seconds = 0;
};

// The offline lower bound a workload's runs are measured against (perfect foresight).
struct OracleFigures {
  bool feasible = true;
  double gpu_hours = kNoValue;
  std::string note;  // why infeasible, or what it assumed
  OraclePlan plan;
  // Serving oracle (NaN for training).
  double attainment = kNoValue;
  double interval_gpu_hours = kNoValue;
  double work_gpu_hours = kNoValue;
  // Training oracle (NaN for serving).
  double completion_time_s = kNoValue;
  double lower_bound_gpu_hours = kNoValue;
  double mean_gpu_util = kNoValue;
  int rescales = 0;
  double static_gpu_hours = kNoValue;
  double static_completion_time_s = kNoValue;
  double deadline_s = kNoValue;
  std::vector<OraclePlanStep> steps;
};

struct ServiceLevel {
  double ttft_s = kNoValue;
  double latency_s = kNoValue;
  double attainment = kNoValue;
};

// Figures only a serving workload (InferenceService) has.
struct ServingFigures {
  int64_t requests = 0, completed = 0, within_slo = 0, timed_out = 0, dropped = 0;
  double slo_attainment = kNoValue;
  double latency_p50_s = kNoValue, latency_p99_s = kNoValue;
  double ttft_p50_s = kNoValue, ttft_p99_s = kNoValue;
  double ready_replica_hours = kNoValue;
  double cold_start_s = kNoValue;
  ServiceLevel slo;
  std::string trace;        // what was replayed
  std::string trace_error;  // the replay stopped early, and why
  std::optional<int> static_peak_replicas;
  // The warm tier, when the service has one: GPU-hours awake and asleep (gpu_hours prices the
  // asleep share at asleep_cost_fraction), and the wake time.
  struct Warm {
    double gpu_hours_awake = 0, gpu_hours_asleep = 0;
    double asleep_cost_fraction = 0, wake_s = 0;
  };
  std::optional<Warm> warm;
};

// Figures only a training workload (TrainingJob) has.
struct TrainingFigures {
  std::string model;
  bool completed = false;
  int policy_rescales = 0;  // rescales the policy chose (not failure replacements)
  int restarts = 0;
  double restart_time_s = 0;
  int failures = 0;
  double steps = 0, samples_trained = 0;
  double samples_lost = 0;  // rolled back to the last checkpoint by failures
  int epochs_completed = 0;
  double load_s = 0, compute_s = 0, eval_s = 0;  // time spent in each phase
};

// Something that happened to a workload at a time: a rescale or a node failure.
struct RunEvent {
  enum class Kind { kRescale, kFailure };
  Kind kind = Kind::kRescale;
  double t_s = 0;
  int from = 0, to = 0;      // rescale: sizes; failure: size before, 0
  bool replacement = false;  // a rescale that replaced a failed node
  int node = -1;             // failure: the node that failed
  double replacement_s = 0;  // failure: how long until it was replaced (or the run ended)
  bool replaced = false;
};

struct WorkloadSummary {
  std::string name;
  std::string kind;  // "TrainingJob", "InferenceService", ...
  double gpu_hours = 0;
  double cost_usd = 0;
  std::optional<double> spot_cost_usd;
  double completion_time_s = kNoValue;  // training: when the job ended (or the run did)
  double mean_gpu_util = kNoValue;      // 0-1, over allocated GPUs, time-weighted
  int rescales = 0;                     // size changes, whoever asked for them
  double max_failure_replacement_s = 0;
  std::optional<ServingFigures> serving;
  std::optional<TrainingFigures> training;
  std::optional<OracleFigures> oracle;
  std::string oracle_error;  // no oracle, and why
  std::vector<RunEvent> events;
  std::vector<TimelinePoint> timeline;  // sampled every report interval
  std::optional<Verdict> verdict;       // against the scenario's targets, when it sets any
};

// How the run's decisions split, and the ones worth showing (scalings, failures, vetoes).
struct DecisionDigest {
  size_t total = 0;  // every decision of the run
  size_t kept = 0;   // those the run kept (RunOptions::decision_log_limit), counted below
  std::map<std::string, int> by_rule;    // "(none)" for a decision without a rule
  std::map<std::string, int> by_action;  // ActionName()
  std::vector<Decision> shown;           // in tick order, at most kDecisionsShown
  size_t not_shown = 0;                  // worth showing but past the cap
};
inline constexpr size_t kDecisionsShown = 500;

struct RunSummary {
  std::string label;   // the run's name in the report (unique in a scenario)
  std::string policy;  // the policy it ran, e.g. "hpa" for label "hpa-queue"
  Baseline baseline = Baseline::kNone;
  // What the run stands for in a multi-run comparison the scenario defines (a shared pool's
  // `role`: static_partition, pool, ...); empty otherwise. Written to report.json as is.
  std::string role;
  nlohmann::json pool;  // the shared pool's figures when the run had one (written as is)
  bool cut = false;     // ended at the duration limit with work left
  double end_s = 0;
  std::vector<WorkloadSummary> workloads;
  DecisionDigest decisions;
  std::optional<BaselineVerdict> vs_static;

  // The whole run's figures: the one workload's, or, with several, sums (GPU-hours, cost,
  // rescales), maxima (completion, replacement) and the GPU-hour-weighted mean utilization;
  // kind-specific figures and the oracle only with one workload.
  WorkloadSummary Totals() const;
  // Rescales per hour of completion time; NaN when the time is not known.
  double RescalesPerHour() const;
  const WorkloadSummary* Workload(const std::string& name) const;
};

// A scenario's runs, side by side.
struct Report {
  std::string scenario;
  std::string file;
  uint64_t seed = 0;
  double duration_limit_s = 0;
  std::vector<RunSummary> runs;
  nlohmann::json pool_comparison;  // a shared-pool scenario's comparison (written as is)
  std::optional<Sweep> sweep;      // `simulate --sweep`: each policy's cost/SLO frontier

  // The first run that is baseline `b`, or null.
  const RunSummary* FindBaseline(Baseline b) const;
  // The workload names over all runs, in first-seen order.
  std::vector<std::string> WorkloadNames() const;
};

// Counts `decisions` into a digest, keeping the ones worth showing (a scaling, a failed
// apply, a vetoed scale-down) up to kDecisionsShown.
DecisionDigest DigestDecisions(const std::vector<Decision>& decisions, size_t total);

}  // namespace aiscale::report
