#include "decide/policies/training.h"

#include <algorithm>

#include "core/numeric.h"
#include "core/signal.h"
#include "decide/policies/training_tick.h"

namespace aiscale::decide {

TrainingConfig TrainingConfig::Parse(const config::ConfigNode& node, const WorkloadContext& ctx) {
  using config::AtLeast;
  using config::Between;
  node.CheckKnown({"name", "cooldown", "min_epochs", "rescales_per_hour", "rescale_burst",
                   "min_dwell", "restart_cost", "max_slowdown", "gain_margin", "grace_period",
                   "warmup", "reference_replicas", "expected_efficiency", "compute_bound_util",
                   "load_util_max", "idle_util_max", "phase_hysteresis", "phase_dwell"});
  TrainingConfig c;
  for (const char* old : {"cooldown", "min_epochs"}) {
    if (node.Has(old)) {
      node.ErrorAt(old,
                   "replaced by the rescale budget: rescales_per_hour (default 1), "
                   "rescale_burst (2) and min_dwell (15m)");
    }
  }
  c.rescales_per_hour = node.Number("rescales_per_hour", c.rescales_per_hour, AtLeast(0));
  c.rescale_burst = node.Number("rescale_burst", c.rescale_burst, AtLeast(0));
  if (node.Has("rescale_burst") && c.rescale_burst < 1) {
    node.ErrorAt("rescale_burst",
                 "must be >= 1: a bucket that holds no token never allows a rescale (use the "
                 "`static` policy for a fixed size)");
  }
  c.min_dwell_s = node.DurationSeconds("min_dwell", c.min_dwell_s, AtLeast(0));
  const double restart = ctx.cold_start_s > 0 ? ctx.cold_start_s : c.restart_cost_s;
  c.restart_cost_s = node.DurationSeconds("restart_cost", restart, AtLeast(0));
  c.max_slowdown = node.Number("max_slowdown", c.max_slowdown, Between(0, 1));
  if (c.max_slowdown >= 1) node.ErrorAt("max_slowdown", "must be < 1");
  c.gain_margin = node.Number("gain_margin", c.gain_margin, AtLeast(0));
  c.grace_period_s = node.DurationSeconds("grace_period", c.grace_period_s, AtLeast(0));
  c.warmup_s = node.DurationSeconds("warmup", c.warmup_s, AtLeast(0));
  c.reference_replicas = node.Int("reference_replicas", 0, Between(0, kMaxReplicaCount));
  c.expected_efficiency = node.Number("expected_efficiency", c.expected_efficiency, Between(0, 1));
  if (node.Has("expected_efficiency") && c.expected_efficiency <= 0) {
    node.ErrorAt("expected_efficiency", "must be > 0");
  }
  c.compute_bound_util = node.Number("compute_bound_util", c.compute_bound_util, Between(1, 100));
  c.phase.load_util_max = node.Number("load_util_max", c.phase.load_util_max, Between(0, 100));
  c.phase.idle_util_max = node.Number("idle_util_max", c.phase.idle_util_max, Between(0, 100));
  c.phase.hysteresis = node.Number("phase_hysteresis", c.phase.hysteresis, Between(0, 50));
  c.phase.dwell_s = node.DurationSeconds("phase_dwell", c.phase.dwell_s, AtLeast(0));
  const int g = std::max(1, ctx.granularity);
  if (c.reference_replicas > 0) {
    if (c.reference_replicas % g != 0) {
      node.ErrorAt("reference_replicas", "must be a multiple of granularity " + std::to_string(g));
    }
    if (c.reference_replicas < ctx.min_replicas || c.reference_replicas > ctx.max_replicas) {
      node.ErrorAt("reference_replicas", "must be within [min_replicas " +
                                             std::to_string(ctx.min_replicas) + ", max_replicas " +
                                             std::to_string(ctx.max_replicas) + "]");
    }
  }
  return c;
}

std::unique_ptr<Policy> TrainingPolicy::Make(const config::ConfigNode& node,
                                             const WorkloadContext& ctx) {
  return std::make_unique<TrainingPolicy>(TrainingConfig::Parse(node, ctx), ctx);
}

std::vector<std::string> TrainingPolicy::Signals() const {
  return {std::string(signals::kSamplesPerS), std::string(signals::kSamplesRemaining)};
}

std::vector<std::string> TrainingPolicy::OptionalSignals() const {
  return {std::string(signals::kPhase), std::string(signals::kGpuUtil),
          std::string(signals::kEpoch)};
}

Recommendation TrainingPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  TrainingTick k(c_, ctx_, in, state);
  ObserveTick(k);
  // The rules of training.h, first match wins; the last always decides.
  for (auto rule :
       {RuleCompleted, RuleReplaceFailedNodes, RuleHoldRestarting, RuleHoldMissingSignal,
        RuleHoldBudget, RuleIoBoundLoad, RuleHoldForPhase, RuleHoldNoData, RuleRescale}) {
    if (rule(k)) break;
  }
  k.Save();
  return k.rec;
}

}  // namespace aiscale::decide
