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
// unless CalibrateOptions::allow_unfinished), or not the run asked for;
// a line cut by a kill or not JSON is skipped (counted in Calibration::skipped_lines).
//
// One run only (issue 27): a log may hold several runs (train.py appends to it); each event
// names its run (`run`, train.py's run id, kept in the checkpoint directory), and a log
// without run ids is split where a `start` follows a `done`. Calibrate reads the run named in
// CalibrateOptions::run, else the last one, and only the decisions made during it (its time
// window, less kDecisionLeadS before its first start). A parameter the run cannot determine
// (a term of the step time with throughput at too few world sizes) falls back to a stated
// default, listed in Calibration::not_determined, and every written value is within the
// scenario schema's bounds.
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
  std::string run;     // the run's id (train.py's `run`); empty in logs written before it
};

struct JobEventLog {
  std::vector<JobEvent> events;  // in file order
  int skipped_lines = 0;
};

JobEventLog ParseJobEvents(std::string_view text);

// The events of one run (calibrate.h, "One run only"). `run` empty picks the last run with
// steps to measure (and a `done`, unless `allow_unfinished`), else the last run; Invalid
// naming the runs the log holds when `run` is not among them.
struct JobRun {
  std::string id;  // "" for a log without run ids
  std::vector<JobEvent> events;
};
Result<JobRun> SelectRun(const JobEventLog& log, const std::string& run, bool allow_unfinished);

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
  std::string run;                // the run's id ("" when the log names none)
  double start_t = 0, end_t = 0;  // the run's first start and its done (or last event)
  size_t decisions_in_run = 0;    // ticks inside the run's window, the ones used
  // What this run could not determine, each with the default it fell back to.
  std::vector<std::string> not_determined;
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
  // The run to read (an event's `run`); empty: the last run in the log.
  std::string run;
};

// Decisions this long before a run's first start still belong to it: the daemon decides from
// its own start, the job's first event comes once its agents joined (torch imports, the
// rendezvous; minutes for a large model).
inline constexpr double kDecisionLeadS = 300;

Result<Calibration> Calibrate(const JobEventLog& log, const std::vector<TickRecord>& ticks,
                              CalibrateOptions options = {});

// Fits the model's terms (sample_compute_s, sync_s, hop_s, the eval split) to what `c`
// measured, each only as far as the run determines it: throughput at one world size fixes the
// per-sample compute alone, two add the all-reduce (sync) term, the hop latency needs three;
// evals at one size are all serial. The rest stay at their defaults (none), each listed in
// c.not_determined with why. Part of Calibrate; public for tests.
void FitModel(Calibration& c);

// The scenario schema's bounds on what JobYaml writes (training_model.cc): bandwidths within
// [1e-6, 1e6] GB/s, one sample's or hop's time within 3600 s.
inline constexpr double kMinGbPerS = 1e-6, kMaxGbPerS = 1e6, kMaxSampleS = 3600;

// The inter-node bandwidth (GB/s) that makes the model's all-reduce take `sync_s` (its
// gradients: JobYaml's), within the schema's bounds; `clamped` says when a bound applied.
// sync_s <= 0 (no all-reduce cost): the maximum.
double BandwidthForSync(double sync_s, bool* clamped = nullptr);

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
