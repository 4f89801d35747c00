#include "decide/policies/training.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/signal.h"
#include "decide/training/size_planner.h"
#include "decide/training/training_state.h"

namespace aiscale::decide {
namespace {

using signals::Phase;

constexpr double kHuge = 1e30;
// Compute time at one size before probing another: enough ticks that the two sizes' measured
// speeds differ by more than their noise.
constexpr double kProbeAfterS = 1800;
// Training time before sample-less phases are priced as a share of the remaining work.
constexpr double kOverheadAfterS = 1800;
// Spare budget a shrink must leave (share of its predicted time): the fit drifts by about this
// much over an hour, and a shrink undone by the next decision costs two restarts for nothing.
constexpr double kShrinkSafety = 0.02;

std::string Num(double v) {
  char buf[32];
  if (std::abs(v) >= 100 || v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  return buf;
}

struct Inputs {
  std::optional<double> samples, remaining, epoch, util;
  std::optional<Phase> phase;
  std::string missing;  // first required signal without data, with its status
};

Inputs ReadInputs(const WorkloadSignals& s) {
  Inputs x;
  auto read = [&](std::string_view name, bool required, bool mean) -> std::optional<double> {
    const SignalSnapshot& snap = s.Get(name);
    if (snap.ok()) return mean ? snap.mean : snap.sum;
    if (required && x.missing.empty()) {
      x.missing = std::string(name) + " is " + std::string(SignalStatusName(snap.status)) +
                  (snap.detail.empty() ? "" : " (" + snap.detail + ")");
    }
    return std::nullopt;
  };
  x.samples = read(signals::kSamplesPerS, true, false);
  x.remaining = read(signals::kSamplesRemaining, true, false);
  x.epoch = read(signals::kEpoch, false, true);
  x.util = read(signals::kGpuUtil, false, true);
  if (auto p = read(signals::kPhase, false, true)) {
    const double r = std::round(*p);
    if (std::abs(*p - r) < 0.25) x.phase = static_cast<Phase>(static_cast<int>(r));
  }
  return x;
}

int FloorTo(int v, int g) { return (v / g) * g; }
int CeilTo(int v, int g) { return ((v + g - 1) / g) * g; }

}  // namespace

TrainingConfig TrainingConfig::Parse(const config::ConfigNode& node, const WorkloadContext& ctx) {
  using config::AtLeast;
  using config::Between;
  node.CheckKnown({"name", "cooldown", "min_epochs", "restart_cost", "max_slowdown", "gain_margin",
                   "grace_period", "warmup", "reference_replicas", "expected_efficiency",
                   "compute_bound_util", "load_util_max", "idle_util_max", "phase_hysteresis",
                   "phase_dwell"});
  TrainingConfig c;
  c.cooldown_s = node.DurationSeconds("cooldown", c.cooldown_s, AtLeast(0));
  c.min_epochs = node.Number("min_epochs", c.min_epochs, AtLeast(0));
  const double restart = ctx.cold_start_s > 0 ? ctx.cold_start_s : c.restart_cost_s;
  c.restart_cost_s = node.DurationSeconds("restart_cost", restart, AtLeast(0));
  c.max_slowdown = node.Number("max_slowdown", c.max_slowdown, Between(0, 1));
  if (c.max_slowdown >= 1) node.ErrorAt("max_slowdown", "must be < 1");
  c.gain_margin = node.Number("gain_margin", c.gain_margin, AtLeast(0));
  c.grace_period_s = node.DurationSeconds("grace_period", c.grace_period_s, AtLeast(0));
  c.warmup_s = node.DurationSeconds("warmup", c.warmup_s, AtLeast(0));
  c.reference_replicas = node.Int("reference_replicas", 0, AtLeast(0));
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
  return {std::string(signals::kSamplesPerS), std::string(signals::kSamplesRemaining),
          std::string(signals::kEpoch)};
}

std::vector<std::string> TrainingPolicy::OptionalSignals() const {
  return {std::string(signals::kPhase), std::string(signals::kGpuUtil)};
}

Recommendation TrainingPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  const double now = SinceEpochSeconds(in.now);
  const double period = ctx_.control_period_s;
  const double rc = c_.restart_cost_s;
  const int g = std::max(1, ctx_.granularity);
  const Inputs x = ReadInputs(in.signals);
  TrainingState t = TrainingState::Load(state);
  if (!t.initialized) {
    t.initialized = true;
    t.last_asked = in.current;
    t.reference = c_.reference_replicas > 0 ? c_.reference_replicas : in.current;
    t.prev_current = in.current;
    t.prev_ready = in.ready;
    t.last_tick = now;
  }
  const double dt = std::clamp(now - t.last_tick, 0.0, 10 * std::max(period, 1.0));
  t.last_tick = now;

  // What happened to the size since the last tick.
  if (in.current != t.prev_current) {
    ChangeKind kind = ChangeKind::kRescale;
    if (in.current < t.prev_current && in.current < t.last_asked) {
      kind = ChangeKind::kFailure;
    } else if (in.current == t.last_asked &&
               t.pending == static_cast<int>(ChangeKind::kReplacement)) {
      kind = ChangeKind::kReplacement;
    }
    if (in.current > t.last_asked) t.last_asked = in.current;  // adopt growth made elsewhere
    t.change_at = now;
    t.change_kind = static_cast<int>(kind);
    t.settled_at = kNever;
    if (kind == ChangeKind::kRescale) {
      t.rescale_at = now;
      t.epoch_at_rescale = x.epoch.value_or(t.epoch_at_rescale);
    }
    if (kind != ChangeKind::kFailure) t.pending = 0;
  } else if (in.ready < t.prev_ready && in.ready < in.current &&
             (t.change_kind == static_cast<int>(ChangeKind::kFailure) || t.change_at == kNever ||
              now - t.change_at >= c_.warmup_s)) {
    // A node left the rendezvous but not the spec, long after any change of ours (ready also
    // dips while the job restarts on its new size): the job restarts as after a failure.
    t.change_at = now;
    t.change_kind = static_cast<int>(ChangeKind::kFailure);
    t.settled_at = kNever;
  }
  t.prev_current = in.current;
  t.prev_ready = in.ready;
  if (t.settled_at == kNever && in.ready >= in.current) t.settled_at = now;
  const bool changed_once = t.change_at != kNever;
  const double restart_end = t.settled_at == kNever ? kHuge : t.settled_at + rc + period;
  const bool restarting = in.ready < in.current || (changed_once && now < restart_end);

  // Phase and learning.
  const PhaseDetector detector(c_.phase);
  const PhaseEstimate ph =
      detector.Update(PhaseReading{x.phase, x.util, x.samples}, now, state, "tr.pd");
  ThroughputPrior prior;
  prior.efficiency = c_.expected_efficiency;
  prior.reference_nodes = t.reference;
  prior.compute_bound_util = c_.compute_bound_util;
  ThroughputModel load = ThroughputModel::Load(state, "tr.load", prior);
  ThroughputModel compute = ThroughputModel::Load(state, "tr.compute", prior);
  // Phases without training samples (load from storage, eval) are learned by their duration:
  // "throughput" = phases per second, one observation per phase that ran at one size.
  ThroughputModel dur_load = ThroughputModel::Load(state, "tr.dur_load", prior);
  ThroughputModel dur_eval = ThroughputModel::Load(state, "tr.dur_eval", prior);
  if (ph.changed && ph.ended && *ph.ended != Phase::kCompute && !t.phase_resized &&
      t.phase_size > 0 && ph.ended_length_s > 0) {
    const double u = t.phase_util_t > 0 ? t.phase_util_s / t.phase_util_t : -1;
    (*ph.ended == Phase::kLoad ? dur_load : dur_eval)
        .Add(t.phase_size, 1.0 / ph.ended_length_s, ph.ended_length_s, u);
  }
  if (ph.changed || t.phase_size == 0) {
    t.phase_size = in.current;
    t.phase_resized = false;
    t.phase_util_s = t.phase_util_t = 0;
  }
  if (in.current != t.phase_size) t.phase_resized = true;
  if (!restarting && x.util) {
    t.phase_util_s += *x.util * dt;
    t.phase_util_t += dt;
  }
  const double phase_util = t.phase_util_t > 0 ? t.phase_util_s / t.phase_util_t : -1;
  // Relative duration of a sample-less phase at n nodes (any scale, consistent across n).
  auto phase_time = [&](Phase p, int n, bool current_phase) {
    const ThroughputModel& d = p == Phase::kLoad ? dur_load : dur_eval;
    if (d.HasData()) return d.SecondsPerSample(n).value_or(kHuge);
    if (current_phase && phase_util >= 0) {
      // Prior: the GPUs' idle share is waiting that more nodes do not shorten.
      const double sigma = std::clamp(1 - phase_util / c_.compute_bound_util, 0.0, 0.98);
      return sigma + (1 - sigma) / n;
    }
    return compute.SecondsPerSample(n).value_or(kHuge);
  };

  std::optional<Phase> learn_phase = ph.phase;
  if (!learn_phase && x.samples && *x.samples > 0) learn_phase = Phase::kCompute;
  const bool has_samples = x.samples && *x.samples > 0;
  const bool sampleless =
      learn_phase && (*learn_phase == Phase::kEval ||
                      (*learn_phase == Phase::kLoad && !load.HasData() && !has_samples));
  // Reference-equivalent time: what the same work would have taken at the reference size.
  double ratio = 1;
  if (restarting) {
    ratio = (t.change_kind == static_cast<int>(ChangeKind::kRescale)) ? 0 : 1;
  } else if (sampleless) {
    ratio =
        phase_time(*learn_phase, t.reference, true) / phase_time(*learn_phase, in.current, true);
  } else {
    const ThroughputModel& m = (learn_phase == Phase::kLoad && load.HasData()) ? load : compute;
    auto y_ref = m.SecondsPerSample(t.reference), y_cur = m.SecondsPerSample(in.current);
    if (y_ref && y_cur) ratio = *y_ref / *y_cur;
  }
  if (!std::isfinite(ratio) || ratio < 0) ratio = 1;
  t.wall_s += dt;
  t.ref_s += dt * ratio;
  if (!restarting && !ph.changed && learn_phase) {
    if (sampleless && compute.HasData()) {
      // Kept as reference-size seconds, so the overhead can be re-priced at any size. Only
      // once training has started: a load before the first step is a one-off, not a share of
      // the remaining work.
      (*learn_phase == Phase::kLoad ? t.load_s : t.eval_s) += dt * ratio;
    } else if (has_samples) {
      ThroughputModel& m = *learn_phase == Phase::kLoad ? load : compute;
      if (m.Add(in.current, *x.samples, dt, x.util.value_or(-1))) {
        (*learn_phase == Phase::kLoad ? t.samples_load : t.samples_compute) += *x.samples * dt;
        t.train_s += dt;
      }
    }
  }

  Recommendation rec;
  rec.desired = in.current;
  rec.valid = true;
  auto fact = [&](const std::string& k, double v) { rec.facts.emplace_back(k, v); };
  fact("current", in.current);
  fact("ready", in.ready);
  fact("last_asked", t.last_asked);
  fact("reference_replicas", t.reference);
  if (x.samples) fact("samples_per_s", *x.samples);
  if (x.remaining) fact("samples_remaining", *x.remaining);
  if (ph.phase) fact("phase", static_cast<double>(*ph.phase));
  auto finish = [&](Recommendation r) {
    t.Save(state);
    load.Save(state, "tr.load");
    compute.Save(state, "tr.compute");
    dur_load.Save(state, "tr.dur_load");
    dur_eval.Save(state, "tr.dur_eval");
    return r;
  };

  // 1. Replace failed nodes.
  const bool deficit =
      in.current < t.last_asked ||
      (in.ready < t.last_asked && (t.change_kind == static_cast<int>(ChangeKind::kFailure) ||
                                   now - t.change_at >= c_.warmup_s));
  if (!deficit) {
    t.deficit_since = kNever;
  } else if (t.deficit_since == kNever) {
    t.deficit_since = now;
  }
  std::string note;
  if (deficit && now - t.deficit_since >= c_.grace_period_s) {
    int target = std::min(t.last_asked, ctx_.max_replicas);
    if (in.max_available) target = std::min(target, FloorTo(*in.max_available, g));
    const double missing_for = now - t.deficit_since;
    fact("deficit_s", missing_for);
    fact("grace_period_s", c_.grace_period_s);
    if (target > in.current || in.current == t.last_asked) {
      rec.desired = std::max(target, in.current);
      rec.rule = "replace_failed_nodes";
      rec.reason = "current " + std::to_string(in.current) + ", ready " + std::to_string(in.ready) +
                   " below the asked " + std::to_string(t.last_asked) + " for " + Num(missing_for) +
                   " s (grace " + Num(c_.grace_period_s) + " s): asking for " +
                   std::to_string(rec.desired);
      if (target < t.last_asked) {
        rec.reason += " (free capacity caps it below " + std::to_string(t.last_asked) + ")";
      }
      if (rec.desired > in.current) t.pending = static_cast<int>(ChangeKind::kReplacement);
      return finish(rec);
    }
    note = "no free capacity to replace the missing nodes (asked " + std::to_string(t.last_asked) +
           "); ";
  }

  // 2. Restarting or warming up.
  if (restarting) {
    rec.rule = "hold_restarting";
    const double left = restart_end >= kHuge ? rc : restart_end - now;
    fact("restart_left_s", left);
    rec.reason = note + "job restarting after a size change (ready " + std::to_string(in.ready) +
                 " of " + std::to_string(in.current) + ", about " + Num(left) +
                 " s of restart window left): no new decision";
    return finish(rec);
  }

  // Required signals for everything below.
  if (!x.missing.empty()) {
    rec.valid = false;
    rec.rule = "hold_missing_signal";
    rec.reason = note + x.missing + ": holding at " + std::to_string(in.current);
    return finish(rec);
  }

  // 3. Cooldown and epoch spacing.
  if (t.rescale_at != kNever) {
    const double since = now - t.rescale_at;
    if (since < c_.cooldown_s) {
      rec.rule = "hold_cooldown";
      fact("since_rescale_s", since);
      fact("cooldown_s", c_.cooldown_s);
      rec.reason =
          note + "last rescale " + Num(since) + " s ago, cooldown " + Num(c_.cooldown_s) + " s";
      return finish(rec);
    }
    if (!x.epoch) {
      rec.valid = false;
      rec.rule = "hold_missing_signal";
      rec.reason = note +
                   "epoch is missing: cannot tell whether an epoch passed since the last "
                   "rescale";
      return finish(rec);
    }
    const double epochs = *x.epoch - t.epoch_at_rescale;
    if (epochs < c_.min_epochs) {
      rec.rule = "hold_epoch";
      fact("epochs_since_rescale", epochs);
      rec.reason =
          note + Num(epochs) + " epochs since the last rescale, need " + Num(c_.min_epochs);
      return finish(rec);
    }
  }

  // 4. Rescale to the best size when the gain pays for the restart.
  if (!compute.HasData()) {
    rec.rule = "hold_no_data";
    rec.reason = note + "no training throughput observed outside restarts yet";
    return finish(rec);
  }
  if (*x.remaining <= 0) {
    rec.rule = "hold_job_done";
    rec.reason = note + "no samples remaining";
    return finish(rec);
  }
  const double train_samples = t.samples_load + t.samples_compute;
  const double phi_load =
      (load.HasData() && train_samples > 0) ? t.samples_load / train_samples : 0.0;
  auto y_of = [](const ThroughputModel& m, int n) { return m.SecondsPerSample(n).value_or(kHuge); };
  const int ref = t.reference;
  // Seconds per training sample for the job's mix: training phases by their share of samples,
  // plus the sample-less phases' time per training sample, re-priced at n.
  SecondsPerSampleFn y_job = [&, phi_load, train_samples, ref](int n) {
    double y = (1 - phi_load) * y_of(compute, n);
    if (phi_load > 0) y += phi_load * y_of(load, n);
    // Overhead per training sample only once a stretch of training gives it a denominator.
    if (train_samples > 0 && t.train_s >= kOverheadAfterS) {
      for (Phase p : {Phase::kLoad, Phase::kEval}) {
        const double ref_s = p == Phase::kLoad ? t.load_s : t.eval_s;
        if (ref_s <= 0) continue;
        const bool cur = ph.phase == p;
        y += ref_s / train_samples * phase_time(p, n, cur) / phase_time(p, ref, cur);
      }
    }
    return y;
  };
  const double overhead_share = t.train_s > 0 ? (t.load_s + t.eval_s) / t.train_s : 0.0;

  PlanInput pi;
  pi.current = in.current;
  pi.reference = t.reference;
  int hi = std::min(ctx_.max_replicas, std::max(t.reference, 1));
  if (in.max_available) hi = std::min(hi, *in.max_available);
  hi = FloorTo(hi, g);
  for (int n = CeilTo(std::max(ctx_.min_replicas, 1), g); n <= hi; n += g) pi.sizes.push_back(n);
  pi.remaining_samples = *x.remaining;
  pi.y_job = y_job;
  // Phase-driven plans are for the phases whose speed curve differs from the job's (input
  // loading, eval); compute is the job's own curve, priced by the job-level plan.
  if (ph.phase && *ph.phase != Phase::kCompute && ph.expected_remaining_s &&
      *ph.expected_remaining_s > 0) {
    const Phase p = *ph.phase;
    PhaseSegment seg;
    seg.phase = std::string(signals::PhaseName(p));
    if (p == Phase::kLoad && load.HasData()) {
      seg.work = *ph.expected_remaining_s / y_of(load, in.current);
      seg.y = [&load, y_of](int n) { return y_of(load, n); };
    } else {
      seg.trains = false;
      seg.work = *ph.expected_remaining_s;
      const int cur = in.current;
      seg.y = [&phase_time, p, cur](int n) {
        return phase_time(p, n, true) / phase_time(p, cur, true);
      };
    }
    pi.phase = seg;
    fact("phase_elapsed_s", ph.elapsed_s);
    fact("phase_remaining_s", *ph.expected_remaining_s);
  }
  pi.restart_s = rc;
  pi.cooldown_s = c_.cooldown_s;
  pi.max_slowdown = c_.max_slowdown;
  pi.gain_margin = c_.gain_margin;
  pi.elapsed_wall_s = t.wall_s;
  pi.elapsed_ref_s = t.ref_s;
  pi.shrink_safety = kShrinkSafety;
  const PlanResult pr = PlanSize(pi);

  const ThroughputParams tp = compute.Params();
  fact("pred_samples_per_s_current", 1 / y_job(in.current));
  fact("pred_samples_per_s_reference", 1 / y_job(t.reference));
  fact("job_best", pr.job_best);
  fact("stay_time_s", pr.stay.time_s);
  fact("stay_cost_node_s", pr.stay.cost_node_s);
  fact("deadline_s", pr.deadline_s);
  fact("elapsed_s", t.wall_s);
  fact("elapsed_ref_s", t.ref_s);
  fact("restart_cost_s", rc);
  fact("compute_t_compute", tp.t_compute);
  fact("compute_sync", tp.sync);
  fact("compute_latency", tp.latency);
  fact("compute_sizes_seen", compute.DistinctSizes());
  // The compute curve one group either side of the current size, for reading the fit.
  for (int n : {in.current - g, in.current, in.current + g}) {
    if (auto v = compute.Predict(n)) fact("compute_samples_per_s_at_" + std::to_string(n), *v);
    if (auto v = compute.Observed(n)) fact("compute_observed_at_" + std::to_string(n), *v);
  }
  fact("load_share", phi_load);
  fact("overhead_share", overhead_share);
  if (pr.has_change) {
    fact("best", pr.chosen.first);
    fact("best_time_s", pr.chosen.time_s);
    fact("best_cost_node_s", pr.chosen.cost_node_s);
    fact("gain", pr.gain);
    fact("gain_needed", pr.needed);
  }
  // 4b. Probe: with compute throughput seen at one size only, the curve's shape is the prior's
  // guess. One step down (cheaper, and within twice the slowdown budget by that guess) for a
  // cooldown tells the model where the knee is, if the job is long enough to use the answer.
  if (pr.verdict != PlanVerdict::kRescale && pr.stay.feasible && compute.DistinctSizes() == 1 &&
      compute.ObservedSeconds(in.current) >= kProbeAfterS && pr.stay.time_s >= 3 * c_.cooldown_s) {
    int probe = 0;
    for (int n : pi.sizes) {
      if (n < in.current && y_job(n) / y_job(in.current) - 1 <= 2 * c_.max_slowdown) {
        probe = std::max(probe, n);
      }
    }
    const double lag =
        probe > 0 ? c_.cooldown_s * (y_job(probe) / y_job(in.current) - 1) + 2 * rc : 0;
    const double slack = pr.deadline_s - t.wall_s - pr.stay.time_s;
    if (probe > 0 && lag <= slack) {
      rec.desired = probe;
      rec.rule = "probe_smaller_size";
      fact("probe", probe);
      fact("probe_lag_s", lag);
      fact("slack_s", slack);
      rec.reason = note + "throughput seen at " + std::to_string(in.current) +
                   " nodes only: probing " + std::to_string(probe) +
                   " to learn the scaling "
                   "curve (prior predicts " +
                   Num(100 * (y_job(probe) / y_job(in.current) - 1)) + "% slower; expected cost " +
                   Num(lag) + " s of " + Num(slack) + " s slack)";
      t.last_asked = probe;
      t.pending = static_cast<int>(ChangeKind::kRescale);
      return finish(rec);
    }
  }
  const std::string unit = pr.stay.feasible ? " node-s" : " s";
  const std::string where =
      pr.phase_driven ? " for the rest of the " + pi.phase->phase + " phase" : "";
  switch (pr.verdict) {
    case PlanVerdict::kRescale:
      rec.desired = pr.chosen.first;
      rec.rule = pr.phase_driven ? "rescale_for_phase" : "rescale_to_best_size";
      rec.reason = note + "rescale " + std::to_string(in.current) + " -> " +
                   std::to_string(rec.desired) + where + ": predicted finish in " +
                   Num(pr.chosen.time_s) + " s (stay: " + Num(pr.stay.time_s) + " s, deadline " +
                   Num(pr.deadline_s - t.wall_s) + " s from now), gain " + Num(pr.gain) + unit +
                   " > needed " + Num(pr.needed) + unit;
      t.last_asked = rec.desired;
      t.pending = static_cast<int>(ChangeKind::kRescale);
      break;
    case PlanVerdict::kHoldGainTooSmall:
      rec.rule = "hold_gain_below_restart_cost";
      rec.reason = note + "best size " + std::to_string(pr.chosen.first) + where + " would gain " +
                   Num(pr.gain) + unit + ", not more than " + Num(pr.needed) + unit +
                   " (restart cost " + Num(rc) + " s with margin " + Num(c_.gain_margin) + ")";
      break;
    case PlanVerdict::kHoldNoBetterSize:
      rec.rule = "hold_no_better_size";
      rec.reason = note +
                   "current size misses the slowdown budget but no allowed size finishes "
                   "sooner (allowed up to " +
                   std::to_string(hi) + ")";
      break;
    case PlanVerdict::kHoldAtBest:
      rec.rule = "hold_at_best_size";
      rec.reason = note + "current size " + std::to_string(in.current) +
                   " is the cheapest that finishes within " + Num(c_.max_slowdown * 100) +
                   "% of the reference " + std::to_string(t.reference) + " (predicted " +
                   Num(pr.stay.time_s) + " s left, " + Num(1 / y_job(in.current)) + " samples/s)";
      break;
  }
  return finish(rec);
}

}  // namespace aiscale::decide
