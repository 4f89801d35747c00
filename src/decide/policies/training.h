// training: the phase-, efficiency- and restart-cost-aware policy for data-parallel training
// jobs (docs/architecture.md "The loop", docs/training-engine-contract.md).
//
// Rules, first match wins (Recommendation.rule names it; reason and facts carry the numbers):
//   0. completed: the job reported no samples remaining after training was seen: nothing is
//      restarted, replaced or rescaled from then on (the signals going missing when the job
//      exits change nothing), until it reports samples to train and trains again.
//   1. replace_failed_nodes: current or ready below the size last asked for, for grace_period:
//      ask for that size again (capped by free capacity); ignores the rescale budget.
//   2. hold_restarting: the job is restarting or warming up after a size change.
//   3. hold_missing_signal: samples_per_s or samples_remaining has no data (valid=false).
//   4. hold_rescale_budget / hold_dwell: the token bucket (rescales_per_hour on average, at most
//      rescale_burst at once) holds no token, or the size has lasted less than min_dwell.
//   5. shrink_io_bound_load / restore_after_load: the initial data load, before any training
//      throughput exists, runs with low GPU util and no samples: shrink to the nodes its input
//      stream keeps busy (n x util / load_util_max), when the gain over its expected remaining
//      length (as long again as so far) pays for both restarts; when it ends, grow back to the
//      reference size at once.
//   5b. hold_for_phase / restore_after_phase: a size chosen for a load or eval phase (rule 6)
//      holds until that phase ends, then the size before it comes back at once.
//   6. rescale_to_best_size / rescale_for_phase / probe_smaller_size: the cheapest size
//      (node-seconds for the rest of the job, restart included) whose predicted completion stays
//      within max_slowdown of the reference size, when its gain over staying exceeds the restart
//      cost by gain_margin; a phase (load, eval) gets a size of its own when its learned length
//      (mean less one deviation) outlasts min_dwell and the bucket can pay for the way back.
//      A move between two sizes both measured must be backed by their readings beyond their
//      noise (move_evidence.h: 3 standard errors), else hold_within_noise; a move to a size
//      never measured waits for 5 readings at the current one (hold_for_baseline); the Decision
//      states the evidence either way (facts evidence_*, compute_sd_at_N, compute_readings_at_N).
//   7. hold_*: otherwise, saying why.
// A phase boundary is seen on the tick it happens (the job's `phase` signal, or inferred), and
// rules 5 and 6 act on it at once when the budget and the payoff allow.
// Missing samples_per_s or samples_remaining gives valid=false: never a scale-down on no data.
// Pure: everything learned (throughput fits, phase lengths, tokens, last asked size) is in the
// state.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "decide/policy_registry.h"
#include "decide/training/phase_detector.h"
#include "decide/training/throughput_model.h"

namespace aiscale::decide {

struct TrainingConfig {
  // Rescale budget: a token bucket refilled at rescales_per_hour, holding at most
  // rescale_burst; every rescale the policy makes spends one. Failures and replacements do not.
  double rescales_per_hour = 1;
  double rescale_burst = 2;
  double min_dwell_s = 900;          // a size lasts at least this long before the next rescale
  double restart_cost_s = 180;       // checkpoint + re-rendezvous + restore
  double max_slowdown = 0.10;        // allowed completion-time loss vs the reference size, [0, 1)
  double gain_margin = 0.5;          // gain must exceed (1 + margin) x restart cost
  double grace_period_s = 60;        // before a missing node is replaced
  double warmup_s = 600;             // after our own change, ready < current is provisioning
  int reference_replicas = 0;        // 0: the size the job started at
  double expected_efficiency = 0.9;  // prior: scaling efficiency at the reference size
  double compute_bound_util = 100;   // prior: GPU util of a step with no stall
  PhaseDetectorConfig phase;

  // Reads the policy node (`name: training` plus the fields above); errors are recorded there.
  static TrainingConfig Parse(const config::ConfigNode& node, const WorkloadContext& ctx);
};

class TrainingPolicy final : public Policy {
 public:
  TrainingPolicy(TrainingConfig c, WorkloadContext ctx) : c_(c), ctx_(ctx) {}
  // The registry's factory: parses `node` (errors recorded there).
  static std::unique_ptr<Policy> Make(const config::ConfigNode& node, const WorkloadContext& ctx);
  std::string_view Name() const override { return "training"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override;
  // Required: without them there is no throughput and no remaining work.
  std::vector<std::string> Signals() const override;
  // Read when present: the job's own phase, the GPUs' utilization (phase inference), epoch.
  std::vector<std::string> OptionalSignals() const override;
  // The restart plus the throughput lost at the smaller size (training_shrink_cost.cc).
  std::optional<double> ShrinkCost(const PersistentState& state, int from, int to, double horizon_s,
                                   int gpus_per_replica) const override;
  const TrainingConfig& config() const { return c_; }

 private:
  TrainingConfig c_;
  WorkloadContext ctx_;
};

}  // namespace aiscale::decide
