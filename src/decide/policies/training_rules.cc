// The training policy's rules, one function each, in the order training.h lists them.
#include <algorithm>
#include <cmath>

#include "core/numeric.h"
#include "core/signal.h"
#include "decide/policies/training_tick.h"
#include "decide/training/move_evidence.h"
#include "decide/training/size_planner.h"

namespace aiscale::decide {
namespace {

using signals::Phase;

// Compute time at one size before probing another: enough ticks that the two sizes' measured
// speeds differ by more than their noise.
constexpr double kProbeAfterS = 1800;
// Training time before sample-less phases are priced as a share of the remaining work.
constexpr double kOverheadAfterS = 1800;
// Spare budget a shrink must leave (share of its predicted time): the fit drifts by about this
// much over an hour, and a shrink undone by the next decision costs two restarts for nothing.
constexpr double kShrinkSafety = 0.02;
// Standard errors of the measured speed ratio by which staying may run past the budget before
// a grow for time (NoiseBand).
constexpr double kBandZ = 2;
// The bucket is refilled tick by tick; a sum of many small refills may land a hair below 1.
constexpr double kTokenSlack = 1e-9;
// Standard errors by which the readings must back a move between two measured sizes. Readings
// are not independent (the job's rate window spans about two ticks), so the error counted
// from them is optimistic by about sqrt(2): 3 keeps a two-sigma margin on independent data.
constexpr double kEvidenceZ = 3;
// Readings a size must have before the job leaves it for a size never measured: the baseline
// the move is judged against once the new size has readings. With one, a 15% spread puts a
// 30% difference within noise, and the job could not come back to learn more (elastic_learn).
constexpr double kBaselineReadings = 5;

int FloorTo(int v, int g) { return (v / g) * g; }

// How far past the budget staying is still feasible (PlanInput::stay_slack): kBandZ standard
// errors of the speed ratio the budget is judged by, so the readings' noise cannot carry a job
// across the budget line and back (elastic_learn under two CPU hogs: 2 read 7.2% slower than
// 3, a shrink on a 10% budget, then 12.4%, a grow, with a standard error of 3.3% on the ratio).
// A grow for time claims the budget is missed; its evidence is the miss beyond the noise. A
// shrink keeps its fixed spare: it is what the policy is for, and a size it left cannot be
// measured better. At most the budget itself: twice the budget is always a miss.
double NoiseBand(const TrainingTick& k) {
  const ThroughputModel& m = k.fits.compute;
  auto rel_se = [&m](int n) {
    const SizeEvidence e = m.Evidence(n);
    return e.count > 0 && e.mean > 0 ? e.se / e.mean : 0.0;
  };
  const int cur = k.in.current;
  double other = 0;
  for (int n : {cur - k.g, cur + k.g, k.t.reference}) {
    if (n >= 1 && n != cur) other = std::max(other, rel_se(n));
  }
  const double band = kBandZ * std::hypot(rel_se(cur), other);
  return std::clamp(band, kShrinkSafety, std::max(kShrinkSafety, k.c.max_slowdown));
}
int LargestAllowed(const TrainingTick& k);
void Ask(TrainingTick& k, int desired, const char* rule, std::string reason);
int CeilTo(int v, int g) { return ((v + g - 1) / g) * g; }
std::string Str(int v) { return std::to_string(v); }
const auto& Num = TrainingNum;

}  // namespace

bool RuleCompleted(TrainingTick& k) {
  TrainingState& t = k.t;
  const bool none_left = k.x.remaining && *k.x.remaining <= 0;
  // A gauge left at 0 before the job set it is not a finished job: only after training ran.
  const bool trained = k.fits.compute.HasData() || k.fits.load.HasData();
  const bool training_again =
      k.x.remaining && *k.x.remaining > 0 && k.x.samples && *k.x.samples > 0;
  if (none_left && trained) t.completed = true;
  if (training_again) t.completed = false;
  if (!t.completed) return false;
  std::string why = none_left ? "the job reports no samples remaining"
                              : "the job reported no samples remaining earlier";
  if (!none_left && !k.x.missing.empty()) why += " (" + k.x.missing + " now)";
  k.rec.rule = "completed";
  k.rec.reason = k.note + why + ": completed, holding at " + Str(k.in.current) +
                 " with no restart, replacement or rescale";
  return true;
}

bool RuleReplaceFailedNodes(TrainingTick& k) {
  TrainingState& t = k.t;
  const PolicyInput& in = k.in;
  const bool deficit =
      in.current < t.last_asked ||
      (in.ready < t.last_asked && (t.change_kind == static_cast<int>(ChangeKind::kFailure) ||
                                   k.now - t.change_at >= k.c.warmup_s));
  if (!deficit) {
    t.deficit_since = kNever;
  } else if (t.deficit_since == kNever) {
    t.deficit_since = k.now;
  }
  if (!deficit || k.now - t.deficit_since < k.c.grace_period_s) return false;
  int target = std::min(t.last_asked, k.ctx.max_replicas);
  if (in.max_available) target = std::min(target, FloorTo(*in.max_available, k.g));
  const double missing_for = k.now - t.deficit_since;
  k.Fact("deficit_s", missing_for);
  k.Fact("grace_period_s", k.c.grace_period_s);
  if (target <= in.current && in.current != t.last_asked) {
    k.note = "no free capacity to replace the missing nodes (asked " + Str(t.last_asked) + "); ";
    return false;
  }
  Recommendation& rec = k.rec;
  rec.desired = std::max(target, in.current);
  rec.rule = "replace_failed_nodes";
  rec.reason = "current " + Str(in.current) + ", ready " + Str(in.ready) + " below the asked " +
               Str(t.last_asked) + " for " + Num(missing_for) + " s (grace " +
               Num(k.c.grace_period_s) + " s): asking for " + Str(rec.desired);
  if (target < t.last_asked) {
    rec.reason += " (free capacity caps it below " + Str(t.last_asked) + ")";
  }
  if (rec.desired > in.current) t.pending = static_cast<int>(ChangeKind::kReplacement);
  return true;
}

bool RuleHoldRestarting(TrainingTick& k) {
  if (!k.restarting) return false;
  const double left = k.restart_end >= kTrainingHuge ? k.c.restart_cost_s : k.restart_end - k.now;
  k.Fact("restart_left_s", left);
  k.rec.rule = "hold_restarting";
  k.rec.reason = k.note + "job restarting after a size change (ready " + Str(k.in.ready) + " of " +
                 Str(k.in.current) + ", about " + Num(left) +
                 " s of restart window left): no new decision";
  return true;
}

bool RuleHoldMissingSignal(TrainingTick& k) {
  if (k.x.missing.empty()) return false;
  k.rec.valid = false;
  k.rec.rule = "hold_missing_signal";
  k.rec.reason = k.note + k.x.missing + ": holding at " + Str(k.in.current);
  return true;
}

bool RuleHoldBudget(TrainingTick& k) {
  const TrainingState& t = k.t;
  Recommendation& rec = k.rec;
  if (t.tokens < 1 - kTokenSlack) {
    const double wait = k.SecondsToTokens(1);
    k.Fact("seconds_to_token", wait);
    k.Fact("rescales_per_hour", k.c.rescales_per_hour);
    rec.rule = "hold_rescale_budget";
    rec.reason = k.note + "rescale budget spent (" + Num(t.tokens) + " tokens; " +
                 Num(k.c.rescales_per_hour) + " per hour, burst " + Num(k.c.rescale_burst) +
                 "): next token in " + Num(wait) + " s";
    return true;
  }
  if (t.rescale_at == kNever) return false;
  const double since = k.now - t.rescale_at;
  if (since >= k.c.min_dwell_s) return false;
  k.Fact("since_rescale_s", since);
  k.Fact("min_dwell_s", k.c.min_dwell_s);
  rec.rule = "hold_dwell";
  rec.reason = k.note + "size " + Str(k.in.current) + " has lasted " + Num(since) +
               " s since the last rescale, min dwell " + Num(k.c.min_dwell_s) + " s";
  return true;
}

bool RuleHoldForPhase(TrainingTick& k) {
  TrainingState& t = k.t;
  if (t.held_phase <= 0) return false;
  const Phase held = static_cast<Phase>(t.held_phase - 1);
  if (k.ph.phase == held) {
    k.rec.rule = "hold_for_phase";
    k.rec.reason = k.note + "sized " + Str(k.in.current) + " for the " +
                   std::string(signals::PhaseName(held)) +
                   " phase: holding until it ends, then back to " + Str(t.io_from);
    return true;
  }
  t.held_phase = 0;
  const int target = std::min(t.io_from, LargestAllowed(k));
  if (target <= k.in.current) return false;
  Ask(k, target, "restore_after_phase",
      "the " + std::string(signals::PhaseName(held)) + " phase ended: back from " +
          Str(k.in.current) + " to " + Str(target) + " nodes");
  return true;
}

bool RuleHoldNoData(TrainingTick& k) {
  // No samples remaining with data is RuleCompleted's; without, the job has not trained yet.
  if (k.fits.compute.HasData() && *k.x.remaining > 0) return false;
  k.rec.rule = "hold_no_data";
  k.rec.reason = k.note + "no training throughput observed outside restarts yet";
  return true;
}

namespace {

int LargestAllowed(const TrainingTick& k) {
  int hi = std::min(k.ctx.max_replicas, std::max(k.t.reference, 1));
  if (k.in.max_available) hi = std::min(hi, *k.in.max_available);
  return FloorTo(hi, k.g);
}

void Ask(TrainingTick& k, int desired, const char* rule, std::string reason) {
  k.rec.desired = desired;
  k.rec.rule = rule;
  k.rec.reason = k.note + std::move(reason);
  k.t.last_asked = desired;
  k.t.pending = static_cast<int>(ChangeKind::kRescale);
}

// The load ended (compute or eval began, or samples flow): back to the size before it at once.
bool RestoreAfterLoad(TrainingTick& k) {
  k.t.io_shrunk = false;
  const int back = k.t.io_from > 0 ? k.t.io_from : k.t.reference;
  const int target = std::min(back, LargestAllowed(k));
  if (target <= k.in.current) return false;
  Ask(k, target, "restore_after_load",
      "the IO-bound load ended: back from " + Str(k.in.current) + " to " + Str(target) +
          " nodes (" + Num(k.t.tokens) + " rescale tokens left)");
  return true;
}

// Fewest nodes that keep a load IO-bound. Storage-bound, each node's busy share goes as 1/n,
// so GPU util u(n) = a + b/n; the load stays IO-bound while u < load_util_max. One size seen:
// a = 0 (all of the util is the load's own work), m = n x u / load_util_max. Two sizes: a and b
// from both.
int IoBoundSize(const TrainingTick& k, double util) {
  const TrainingState& t = k.t;
  const int cur = k.in.current;
  const double umax = k.c.phase.load_util_max;
  const int floor = CeilTo(std::max(k.ctx.min_replicas, 1), k.g);
  double m = cur * util / umax;
  if (t.io_n1 > 0 && t.io_n1 != cur) {
    const double b = (util - t.io_u1) / (1.0 / cur - 1.0 / t.io_n1);
    const double a = util - b / cur;
    // Already past the threshold or no 1/n shape: keep the estimate from one point.
    if (b > 0 && a < umax) m = b / (umax - a);
  }
  return std::max(floor, CeilTo(ReplicaCountCeil(m), k.g));
}

}  // namespace

bool RuleIoBoundLoad(TrainingTick& k) {
  TrainingState& t = k.t;
  const int cur = k.in.current;
  const bool in_load = k.ph.phase == Phase::kLoad;
  const bool samples = k.x.samples && *k.x.samples > 0;
  if (t.io_shrunk && (!in_load || samples)) return RestoreAfterLoad(k);
  const bool initial = !k.fits.compute.HasData();
  if (!in_load || samples || !k.x.util || (!initial && t.io_size == 0)) return false;
  const double umax = k.c.phase.load_util_max;
  // Mean over this size's time in the phase: one tick's reading is too noisy for a fit.
  const double util = t.size_util_t > 0 ? t.size_util_s / t.size_util_t : *k.x.util;
  if (util >= umax) return false;
  // The initial load is judged on detection (no throughput exists to price it against), after
  // the phase detector's dwell and two readings; a reload by the size learned before.
  if (k.ph.elapsed_s < std::max(k.c.phase.dwell_s, 2 * k.ctx.control_period_s)) return false;
  const int floor = CeilTo(std::max(k.ctx.min_replicas, 1), k.g);
  const int m = t.io_size > 0 ? std::max(t.io_size, floor) : IoBoundSize(k, util);
  if (t.io_n1 > 0 && t.io_n1 != cur && t.io_size == 0) t.io_size = m;  // two sizes seen
  if (t.io_n1 == 0) {
    t.io_n1 = cur;
    t.io_u1 = util;
  }
  if (m >= cur) {
    if (!t.io_shrunk) return false;
    // Shrunk for this load: the size holds until the load ends, whatever the job-level plan
    // would make of a job that ran this small to the end.
    k.rec.rule = "hold_io_bound_load";
    k.rec.reason = k.note + "load IO-bound at " + Str(cur) + " nodes (GPU util " + Num(util) +
                   "%): holding until it ends, then back to " + Str(t.io_from);
    return true;
  }
  const double rc = k.c.restart_cost_s;
  const double needed = (1 + k.c.gain_margin) * (m + cur) * rc;  // down now, back up later
  // First sight of the initial load: shrink at once; the bucket starts with the way back.
  const bool first = initial && !t.io_shrunk;
  // The expected length, not the cautious one: an IO-bound load run small costs no time, only
  // the two restarts if it ends sooner than expected.
  const double left = k.ph.expected_remaining_s.value_or(0);
  const double gain = (cur - m) * left;
  k.Fact("io_bound_size", m);
  k.Fact("load_util", util);
  k.Fact("phase_remaining_s", left);
  k.Fact("gain", gain);
  k.Fact("gain_needed", needed);
  const bool pays = first || gain > needed;
  const bool way_back = k.SecondsToTokens(2) <= (first ? 0 : left);
  if (!pays || !way_back) {
    k.rec.rule = "hold_io_bound_load";
    k.rec.reason = k.note + "load IO-bound (GPU util " + Num(util) + "%, no samples): " + Str(m) +
                   " nodes would gain " + Num(gain) + " node-s over its expected " + Num(left) +
                   " s left, " +
                   (!pays ? "not more than " + Num(needed) + " node-s for two restarts"
                          : "but the budget could not pay for the way back in time");
    return true;
  }
  if (!t.io_shrunk) t.io_from = cur;
  Ask(k, m, "shrink_io_bound_load",
      std::string(initial ? "initial load" : "load") + " IO-bound (GPU util " + Num(util) +
          "% below " + Num(umax) + "%, no samples): " + Str(cur) + " -> " + Str(m) +
          " nodes keep the input stream busy" +
          (first ? " (first sight: the GPUs wait on storage)"
                 : "; gain " + Num(gain) + " node-s over the expected " + Num(left) +
                       " s left > needed " + Num(needed) + " node-s for both restarts"));
  t.io_shrunk = true;
  return true;
}

namespace {

// Seconds per training sample for the job's mix: training phases by their share of samples,
// plus the sample-less phases' time per training sample, re-priced at n.
SecondsPerSampleFn JobCurve(const TrainingTick& k, double phi_load) {
  const TrainingState& t = k.t;
  const double train_samples = t.samples_load + t.samples_compute;
  return [&k, phi_load, train_samples](int n) {
    const TrainingState& t = k.t;
    double y = (1 - phi_load) * TrainingTick::Y(k.fits.compute, n);
    if (phi_load > 0) y += phi_load * TrainingTick::Y(k.fits.load, n);
    // Overhead per training sample only once a stretch of training gives it a denominator.
    if (train_samples > 0 && t.train_s >= kOverheadAfterS) {
      for (Phase p : {Phase::kLoad, Phase::kEval}) {
        const double ref_s = p == Phase::kLoad ? t.load_s : t.eval_s;
        if (ref_s <= 0) continue;
        const bool cur = k.ph.phase == p;
        y += ref_s / train_samples * k.PhaseTime(p, n, cur) / k.PhaseTime(p, t.reference, cur);
      }
    }
    return y;
  };
}

// The current phase as a plan segment, for the phases whose speed curve differs from the
// job's (input loading, eval); compute is the job's own curve, priced by the job-level plan.
std::optional<PhaseSegment> CurrentSegment(TrainingTick& k) {
  const PhaseEstimate& ph = k.ph;
  if (!ph.phase || *ph.phase == Phase::kCompute || !ph.cautious_remaining_s ||
      *ph.cautious_remaining_s <= 0) {
    return std::nullopt;
  }
  // Cautious length (mean less one deviation): a phase shorter than planned wastes the restarts.
  const double left = *ph.cautious_remaining_s;
  const Phase p = *ph.phase;
  PhaseSegment seg;
  seg.phase = std::string(signals::PhaseName(p));
  if (p == Phase::kLoad && k.fits.load.HasData()) {
    const ThroughputModel& load = k.fits.load;
    seg.work = left / TrainingTick::Y(load, k.in.current);
    seg.y = [&load](int n) { return TrainingTick::Y(load, n); };
  } else {
    seg.trains = false;
    seg.work = left;
    const int cur = k.in.current;
    seg.y = [&k, p, cur](int n) { return k.PhaseTime(p, n, true) / k.PhaseTime(p, cur, true); };
  }
  k.Fact("phase_elapsed_s", ph.elapsed_s);
  k.Fact("phase_remaining_s", left);
  if (ph.typical_length_s) k.Fact("phase_typical_s", *ph.typical_length_s);
  if (ph.length_sd_s) k.Fact("phase_length_sd_s", *ph.length_sd_s);
  return seg;
}

void PlanFacts(TrainingTick& k, const PlanResult& pr, const SecondsPerSampleFn& y_job,
               double phi_load) {
  const TrainingState& t = k.t;
  const ThroughputModel& compute = k.fits.compute;
  const ThroughputParams tp = compute.Params();
  const int cur = k.in.current;
  k.Fact("pred_samples_per_s_current", 1 / y_job(cur));
  k.Fact("pred_samples_per_s_reference", 1 / y_job(t.reference));
  k.Fact("job_best", pr.job_best);
  k.Fact("stay_time_s", pr.stay.time_s);
  k.Fact("stay_cost_node_s", pr.stay.cost_node_s);
  k.Fact("deadline_s", pr.deadline_s);
  k.Fact("elapsed_s", t.wall_s);
  k.Fact("elapsed_ref_s", t.ref_s);
  k.Fact("restart_cost_s", k.c.restart_cost_s);
  k.Fact("compute_t_compute", tp.t_compute);
  k.Fact("compute_sync", tp.sync);
  k.Fact("compute_latency", tp.latency);
  k.Fact("compute_sizes_seen", compute.DistinctSizes());
  // The compute curve one group either side of the current size, for reading the fit.
  for (int n : {cur - k.g, cur, cur + k.g}) {
    if (auto v = compute.Predict(n)) k.Fact("compute_samples_per_s_at_" + Str(n), *v);
    if (auto v = compute.Observed(n)) k.Fact("compute_observed_at_" + Str(n), *v);
    const SizeEvidence e = compute.Evidence(n);
    if (e.count > 0) {
      k.Fact("compute_readings_at_" + Str(n), e.count);
      k.Fact("compute_sd_at_" + Str(n), e.sd);
    }
  }
  k.Fact("load_share", phi_load);
  k.Fact("overhead_share", t.train_s > 0 ? (t.load_s + t.eval_s) / t.train_s : 0.0);
  if (pr.has_change) {
    k.Fact("best", pr.chosen.first);
    k.Fact("best_time_s", pr.chosen.time_s);
    k.Fact("best_cost_node_s", pr.chosen.cost_node_s);
    k.Fact("gain", pr.gain);
    k.Fact("gain_needed", pr.needed);
  }
}

// With compute throughput seen at one size only, the curve's shape is the prior's guess. One
// step down (cheaper, and within twice the slowdown budget by that guess) for an hour tells
// the model where the knee is, if the job is long enough to use the answer.
bool TryProbe(TrainingTick& k, const PlanInput& pi, const PlanResult& pr,
              const SecondsPerSampleFn& y_job) {
  const int cur = k.in.current;
  // The probe lasts one dwell: long enough to measure the probe size's speed over its noise.
  const double cool = k.c.min_dwell_s;
  const double rc = k.c.restart_cost_s;
  if (pr.verdict == PlanVerdict::kRescale || !pr.stay.feasible ||
      k.fits.compute.DistinctSizes() != 1 || k.fits.compute.ObservedSeconds(cur) < kProbeAfterS ||
      pr.stay.time_s < 3 * cool) {
    return false;
  }
  int probe = 0;
  for (int n : pi.sizes) {
    if (n < cur && y_job(n) / y_job(cur) - 1 <= 2 * k.c.max_slowdown) probe = std::max(probe, n);
  }
  if (probe == 0) return false;
  const double slow = y_job(probe) / y_job(cur) - 1;
  const double lag = cool * slow + 2 * rc;
  const double slack = pr.deadline_s - k.t.wall_s - pr.stay.time_s;
  // Information is worth half the slack at most: the rest stays for the phases' own sizes
  // (a load run small, an eval run small), which the budget also pays for.
  if (lag > 0.5 * slack) return false;
  // And the probe must pay for itself by the prior: the node-seconds it saves over its length
  // against both restarts. Where the prior sees near-linear scaling it saves nothing.
  const double saved = cool / y_job(probe) * (cur * y_job(cur) - probe * y_job(probe));
  const double needed = (1 + k.c.gain_margin) * (probe + cur) * rc;
  k.Fact("probe_saved_node_s", saved);
  k.Fact("probe_needed_node_s", needed);
  if (saved <= needed) return false;
  k.Fact("probe", probe);
  k.Fact("probe_lag_s", lag);
  k.Fact("slack_s", slack);
  Ask(k, probe, "probe_smaller_size",
      "throughput seen at " + Str(cur) + " nodes only: probing " + Str(probe) +
          " to learn the scaling curve (prior predicts " + Num(100 * slow) +
          "% slower; expected cost " + Num(lag) + " s of " + Num(slack) + " s slack)");
  return true;
}

// A job-level move between sizes must be backed by what was measured at both beyond their
// noise (move_evidence.h): the confidence goes into the facts; when it falls short, the size
// holds and the Decision says so. A move to a size never measured waits for a baseline of
// readings where the job is. Returns true when it held.
bool HoldWithinNoise(TrainingTick& k, const PlanResult& pr, const MoveEvidence& ev) {
  k.Fact("evidence_z", ev.judged ? ev.z : 0);
  k.Fact("evidence_z_needed", kEvidenceZ);
  k.Fact("evidence_judged", ev.judged ? 1 : 0);
  for (const SizeEvidence* e : {&ev.from, &ev.to}) {
    k.Fact("evidence_readings_at_" + Str(e->nodes), e->count);
    if (e->count > 0) k.Fact("evidence_mean_at_" + Str(e->nodes), e->mean);
  }
  if (!ev.judged && ev.to.count <= 0 && ev.from.count < kBaselineReadings) {
    k.rec.rule = "hold_for_baseline";
    k.rec.reason = k.note + "the model prefers " + Str(pr.chosen.first) + " (never measured) to " +
                   Str(k.in.current) + "; first " + Num(kBaselineReadings) + " readings at " +
                   Str(k.in.current) + " (" + Num(ev.from.count) +
                   " so far), so the move can be judged against them";
    return true;
  }
  if (ev.Backs(kEvidenceZ)) return false;
  k.rec.rule = "hold_within_noise";
  k.rec.reason = k.note + "the model prefers " + Str(pr.chosen.first) + " to " + Str(k.in.current) +
                 " (gain " + Num(pr.gain) + " > needed " + Num(pr.needed) +
                 "), but the readings do not back it beyond their noise: " + ev.Text() +
                 (ev.judged ? ", needed " + Num(kEvidenceZ) : "") + "; holding at " +
                 Str(k.in.current);
  return true;
}

void ApplyVerdict(TrainingTick& k, const PlanInput& pi, const PlanResult& pr,
                  const SecondsPerSampleFn& y_job, int hi) {
  const int cur = k.in.current;
  const std::string unit = pr.stay.feasible ? " node-s" : " s";
  std::string where = pr.phase_driven ? " for the rest of the " + pi.phase->phase + " phase" : "";
  if (!pr.phase_driven && pr.has_change && pr.chosen.then != pr.chosen.first) {
    where = " on lent GPUs for the " + Num(*pi.lease_s) +
            " s the pool's loans last, then back to " + Str(pr.chosen.then);
  }
  Recommendation& rec = k.rec;
  std::string confidence;
  if (pr.verdict == PlanVerdict::kRescale && !pr.phase_driven) {
    // A saving is judged per node, a move for time on the job's throughput.
    const MoveEvidence ev = JudgeMove(k.fits.compute, cur, pr.chosen.first, pr.stay.feasible);
    if (HoldWithinNoise(k, pr, ev)) return;
    confidence = "; evidence: " + ev.Text();
  }
  switch (pr.verdict) {
    case PlanVerdict::kRescale:
      if (pr.phase_driven && k.ph.phase) {
        // Held for the phase: undone when it ends, whatever the job-level plan says meanwhile.
        k.t.held_phase = 1 + static_cast<int>(*k.ph.phase);
        k.t.io_from = cur;
      }
      Ask(k, pr.chosen.first, pr.phase_driven ? "rescale_for_phase" : "rescale_to_best_size",
          "rescale " + Str(cur) + " -> " + Str(pr.chosen.first) + where + ": predicted finish in " +
              Num(pr.chosen.time_s) + " s (stay: " + Num(pr.stay.time_s) + " s, deadline " +
              Num(pr.deadline_s - k.t.wall_s) + " s from now), gain " + Num(pr.gain) + unit +
              " > needed " + Num(pr.needed) + unit + confidence);
      break;
    case PlanVerdict::kHoldGainTooSmall:
      rec.rule = "hold_gain_below_restart_cost";
      rec.reason = k.note + "best size " + Str(pr.chosen.first) + where + " would gain " +
                   Num(pr.gain) + unit + ", not more than " + Num(pr.needed) + unit +
                   " (restart cost " + Num(k.c.restart_cost_s) + " s with margin " +
                   Num(k.c.gain_margin) + ")";
      break;
    case PlanVerdict::kHoldNoBetterSize:
      rec.rule = "hold_no_better_size";
      rec.reason = k.note +
                   "current size misses the slowdown budget but no allowed size finishes "
                   "sooner (allowed up to " +
                   Str(hi) + ")";
      break;
    case PlanVerdict::kHoldAtBest:
      rec.rule = "hold_at_best_size";
      rec.reason = k.note + "current size " + Str(cur) + " is the cheapest that finishes within " +
                   Num(k.c.max_slowdown * 100) + "% of the reference " + Str(k.t.reference) +
                   " (predicted " + Num(pr.stay.time_s) + " s left, " + Num(1 / y_job(cur)) +
                   " samples/s)";
      break;
  }
}

}  // namespace

bool RuleRescale(TrainingTick& k) {
  const TrainingState& t = k.t;
  const double train_samples = t.samples_load + t.samples_compute;
  const double phi_load =
      (k.fits.load.HasData() && train_samples > 0) ? t.samples_load / train_samples : 0.0;
  const SecondsPerSampleFn y_job = JobCurve(k, phi_load);

  PlanInput pi;
  pi.current = k.in.current;
  pi.reference = t.reference;
  const int hi = LargestAllowed(k);
  for (int n = CeilTo(std::max(k.ctx.min_replicas, 1), k.g); n <= hi; n += k.g) {
    pi.sizes.push_back(n);
  }
  pi.remaining_samples = *k.x.remaining;
  pi.y_job = y_job;
  pi.phase = CurrentSegment(k);
  pi.restart_s = k.c.restart_cost_s;
  // A phase's own size must be undone when the phase ends: after min_dwell, and with a token
  // left for the way back.
  pi.return_wait_s = std::max(k.c.min_dwell_s, k.SecondsToTokens(2));
  pi.max_slowdown = k.c.max_slowdown;
  pi.gain_margin = k.c.gain_margin;
  pi.elapsed_wall_s = t.wall_s;
  pi.elapsed_ref_s = t.ref_s;
  pi.shrink_safety = kShrinkSafety;
  pi.stay_slack = NoiseBand(k);
  k.Fact("stay_slack", pi.stay_slack);
  if (k.in.pool_lease) {
    pi.lease_from = k.in.pool_lease->secure;
    pi.lease_s = k.in.pool_lease->expected_s;
    k.Fact("pool_secure", pi.lease_from);
    k.Fact("pool_lease_s", *pi.lease_s);
  }
  const PlanResult pr = PlanSize(pi);
  PlanFacts(k, pr, y_job, phi_load);
  if (TryProbe(k, pi, pr, y_job)) return true;
  ApplyVerdict(k, pi, pr, y_job, hi);
  return true;
}

}  // namespace aiscale::decide
