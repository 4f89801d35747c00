// Calibrate: turns what a real elastic training run recorded (the job's events log, as
// examples/elastic/train.py --events writes it, and aiscale's decisions) into the `job` of a
// simulator scenario, and into the facts the simulator's prediction is judged against.
//
// Why: a real job's behaviour (throughput by world size, phase lengths, restart cost) is what
// makes policies comparable on it offline; `aiscale calibrate` reads the files and runs the
// simulator, everything it computes is here, pure (no I/O, no clock), so tables test it.
//
//   ASSIGN_OR_RETURN(auto events, ParseJobEvents(text));
//   ASSIGN_OR_RETURN(Calibration c, Calibrate(events, ticks));
//   std::cout << JobYaml(c, 6);
//
// Errors: Invalid when the log holds no run to calibrate from (no start, no steps, no done
// unless CalibrateOptions::allow_unfinished);
// a line cut by a kill or not JSON is skipped (counted in Calibration::skipped_lines).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "report/run_summary.h"

namespace aiscale::sim {

// One line of the job's events log (docs/training-engine-contract.md): ev is start, phase,
// step, ckpt, eval, stop or done; t is wall time in seconds.
struct JobEvent {
  std::string ev;
  double t = 0;
  int world = 0;       // start, step
  double samples = 0;  // start, step, ckpt, stop, done
  std::string phase;   // phase
  int epoch = -1;      // phase, eval
};

struct JobEventLog {
  std::vector<JobEvent> events;  // in file order
  int skipped_lines = 0;
};

JobEventLog ParseJobEvents(std::string_view text);

// One controller tick of the workload, from the store: the replicas it found and, when it
// scaled, the replicas it asked for.
struct TickRecord {
  double t = 0;  // wall seconds
  int current = 0;
  bool scaled = false;
  int to = 0;
};

// Non-negative least squares, min |X b - y| with b >= 0, for up to 4 columns (the fits here
// have 1-3): every active set is tried, fewer columns first, so an exact fit with fewer
// parameters wins a tie. Empty X or more than 4 columns: {}.
std::vector<double> FitNonNegative(const std::vector<std::vector<double>>& x,
                                   const std::vector<double>& y);

// The run as it really went, in the simulator's terms.
struct RealRun {
  double job_time_s = 0;  // first start -> done
  int rescales = 0;       // aiscale's scale actions in that time
  double load_s = 0, compute_s = 0, eval_s = 0, restart_s = 0;  // time per phase, summed
  double node_hours = 0;  // agents allocated (the decisions' replica counts) over the job time
  double samples = 0;
};

struct Calibration {
  // Measured.
  std::map<int, double> samples_per_s;  // compute phase, by world size
  std::map<int, double> eval_s;         // mean eval length by world size
  double load_s = 0;                    // median load length (any world size)
  std::vector<double> grow_latency_s;   // decision -> first step at the new size
  std::vector<double> shrink_latency_s;
  double restart_gap_s = 0;  // median: last step before a rescale's restart -> restart
  double grow_lead_s = 0;    // median: grow decision -> last step at the old size
  int epochs = 0;
  double total_samples = 0;
  int batch = 0;  // samples per rank per step
  int initial_world = 1;
  bool finished = true;  // false: calibrated up to the last event of an unfinished run
  int skipped_lines = 0;
  RealRun real;
  // Fitted (the simulator's model; training_model.h): t_step(n) = batch * sample_compute_s / n
  // + sync_s * (n-1)/n + 2 (n-1) hop_s; eval(n) = eval_parallel_s / n + eval_serial_s.
  double sample_compute_s = 0, sync_s = 0, hop_s = 0;
  double eval_parallel_s = 0, eval_serial_s = 0;

  // The fitted model's samples/s at n, to set beside the measured ones.
  double ModelSamplesPerS(int n) const;
};

struct CalibrateOptions {
  // A run cut before its `done` event (a test's, a stopped job's) ends at its last event, and
  // its job at the samples it reached; otherwise such a log is Invalid.
  bool allow_unfinished = false;
};

Result<Calibration> Calibrate(const JobEventLog& log, const std::vector<TickRecord>& ticks,
                              CalibrateOptions options = {});

// The scenario's `job:` map for the TrainingJob model, as YAML lines indented by `indent`.
std::string JobYaml(const Calibration& c, int indent);

// What a whole calibrated scenario needs besides the job.
struct ScenarioFrame {
  std::string name = "calibrated";
  std::string workload = "job";
  int min_replicas = 1;
  int max_replicas = 1;
  double control_period_s = 15;
  std::string policy_yaml;  // the workload's `policy` map, flow or block YAML
};
std::string ScenarioYaml(const Calibration& c, const ScenarioFrame& frame);

// Predicted (a simulated TrainingJob's summary) next to real, one row per figure, with the
// relative error (predicted / real - 1; 0 when both are 0).
struct FidelityRow {
  std::string what;
  double predicted = 0;
  double real = 0;
  double error = 0;
};
std::vector<FidelityRow> CompareWithRun(const RealRun& real,
                                        const report::WorkloadSummary& summary);

}  // namespace aiscale::sim
