// The training policy's observing half: what changed since the last tick, which phase the job
// is in, and what the throughput fits learn from this tick (training_tick.h).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/signal.h"
#include "decide/policies/training_tick.h"

namespace aiscale::decide {
namespace {

using signals::Phase;

bool IsKind(int v, ChangeKind k) { return v == static_cast<int>(k); }

// The rescale budget's bucket, brought to now (it starts full).
void RefillTokens(TrainingTick& k) {
  TrainingState& t = k.t;
  if (t.tokens_at == kNever) {
    t.tokens = k.c.rescale_burst;
  } else {
    const double dt = std::max(0.0, k.now - t.tokens_at);
    t.tokens = std::min(k.c.rescale_burst, t.tokens + k.c.rescales_per_hour / 3600 * dt);
  }
  t.tokens_at = k.now;
}

// What happened to the size since the last tick (a rescale, a failure, a replacement).
void TrackSizeChanges(TrainingTick& k) {
  TrainingState& t = k.t;
  const PolicyInput& in = k.in;
  const double now = k.now;
  if (in.current != t.prev_current) {
    ChangeKind kind = ChangeKind::kRescale;
    const bool by_pool = in.pool_limit && in.current == *in.pool_limit;
    if (by_pool) {
      // The pool set this size: a rescale, and the size asked now (below), not a failure.
    } else if (in.current < t.prev_current && in.current < t.last_asked) {
      kind = ChangeKind::kFailure;
    } else if ((in.current == t.last_asked && IsKind(t.pending, ChangeKind::kReplacement)) ||
               (in.current > t.prev_current && in.current <= t.last_asked &&
                IsKind(t.change_kind, ChangeKind::kFailure))) {
      // Growing back after a failure, asked by us or raised by the constraints (min_replicas).
      kind = ChangeKind::kReplacement;
    }
    if (in.current > t.last_asked) t.last_asked = in.current;  // adopt growth made elsewhere
    t.change_at = now;
    t.change_kind = static_cast<int>(kind);
    t.settled_at = kNever;
    if (kind == ChangeKind::kRescale) {
      t.rescale_at = now;
      t.epoch_at_rescale = k.x.epoch.value_or(t.epoch_at_rescale);
      t.tokens = std::max(0.0, t.tokens - 1);  // growth made elsewhere spends one too
    }
    if (kind != ChangeKind::kFailure) t.pending = 0;
  } else if (in.ready < t.prev_ready && in.ready < in.current &&
             (IsKind(t.change_kind, ChangeKind::kFailure) || t.change_at == kNever ||
              now - t.change_at >= k.c.warmup_s)) {
    // A node left the rendezvous but not the spec, long after any change of ours (ready also
    // dips while the job restarts on its new size): the job restarts as after a failure.
    t.change_at = now;
    t.change_kind = static_cast<int>(ChangeKind::kFailure);
    t.settled_at = kNever;
  }
  if (in.current != t.prev_current) t.size_util_s = t.size_util_t = 0;
  // The pool granted less than was asked: the grant is the size asked now. Otherwise the rest
  // of the ask would read as nodes to replace, and the job would grow onto each GPU the pool
  // frees, one restart per tick, past the rescale budget. (A job below the grant lost nodes and
  // is replaced up to the grant.)
  if (in.pool_limit && in.current <= *in.pool_limit)
    t.last_asked = std::min(t.last_asked, *in.pool_limit);
  t.prev_current = in.current;
  t.prev_ready = in.ready;
  if (t.settled_at == kNever && in.ready >= in.current) t.settled_at = now;
  const bool changed_once = t.change_at != kNever;
  const double period = k.ctx.control_period_s;
  k.restart_end =
      t.settled_at == kNever ? kTrainingHuge : t.settled_at + k.c.restart_cost_s + period;
  k.restarting = in.ready < in.current || (changed_once && now < k.restart_end);
}

// Phase detection; a sample-less phase that ran at one size teaches its duration.
void TrackPhase(TrainingTick& k, double dt) {
  TrainingState& t = k.t;
  const PhaseDetector detector(k.c.phase);
  static const PhaseKeys keys("tr.pd");  // made once: the policy updates every tick
  k.ph = detector.Update(PhaseReading{k.x.phase, k.x.util, k.x.samples}, k.now, k.state, keys);
  const PhaseEstimate& ph = k.ph;
  if (ph.changed && ph.ended && *ph.ended != Phase::kCompute && !t.phase_resized &&
      t.phase_size > 0 && ph.ended_length_s > 0) {
    const double u = t.phase_util_t > 0 ? t.phase_util_s / t.phase_util_t : -1;
    (*ph.ended == Phase::kLoad ? k.fits.dur_load : k.fits.dur_eval)
        .Add(t.phase_size, 1.0 / ph.ended_length_s, ph.ended_length_s, u);
  }
  if (ph.changed || t.phase_size == 0) {
    t.phase_size = k.in.current;
    t.phase_resized = false;
    t.phase_util_s = t.phase_util_t = 0;
    t.size_util_s = t.size_util_t = 0;  // per size within a phase
  }
  if (k.in.current != t.phase_size) t.phase_resized = true;
  if (!k.restarting && k.x.util) {
    t.phase_util_s += *k.x.util * dt;
    t.phase_util_t += dt;
    t.size_util_s += *k.x.util * dt;
    t.size_util_t += dt;
  }
  k.phase_util = t.phase_util_t > 0 ? t.phase_util_s / t.phase_util_t : -1;
}

// Reference-equivalent time and the throughput fits.
void Learn(TrainingTick& k, double dt) {
  TrainingState& t = k.t;
  TrainingFits& f = k.fits;
  const TrainingInputs& x = k.x;
  k.learn_phase = k.ph.phase;
  const bool has_samples = x.samples && *x.samples > 0;
  if (!k.learn_phase && has_samples) k.learn_phase = Phase::kCompute;
  const std::optional<Phase> lp = k.learn_phase;
  const bool sampleless =
      lp && (*lp == Phase::kEval || (*lp == Phase::kLoad && !f.load.HasData() && !has_samples));
  // Reference-equivalent time: what the same work would have taken at the reference size.
  // Only a stalled job (ready 0: the rendezvous is down) loses time to a change; while new
  // nodes boot or join, the job works on the `ready` ones (the engine contract).
  const bool stalled = k.restarting && k.in.ready <= 0;
  const int working = k.restarting ? std::max(1, std::min(k.in.ready, k.in.current)) : k.in.current;
  double ratio = 1;
  if (stalled) {
    ratio = IsKind(t.change_kind, ChangeKind::kRescale) ? 0 : 1;
  } else if (sampleless) {
    ratio = k.PhaseTime(*lp, t.reference, true) / k.PhaseTime(*lp, working, true);
  } else {
    const ThroughputModel& m = (lp == Phase::kLoad && f.load.HasData()) ? f.load : f.compute;
    auto y_ref = m.SecondsPerSample(t.reference), y_cur = m.SecondsPerSample(working);
    if (y_ref && y_cur) ratio = *y_ref / *y_cur;
  }
  if (!std::isfinite(ratio) || ratio < 0) ratio = 1;
  t.wall_s += dt;
  t.ref_s += dt * ratio;
  if (k.restarting || k.ph.changed || !lp) return;
  if (sampleless && f.compute.HasData()) {
    // Kept as reference-size seconds, so the overhead can be re-priced at any size. Only once
    // training has started: a load before the first step is a one-off, not a share of the
    // remaining work.
    (*lp == Phase::kLoad ? t.load_s : t.eval_s) += dt * ratio;
  } else if (has_samples) {
    ThroughputModel& m = *lp == Phase::kLoad ? f.load : f.compute;
    // One reading is one reading: a tick that came late (a busy machine) still read one rate
    // window, so it weighs as much as an on-time one, not as the whole gap.
    const double weight = std::min(dt, std::max(k.ctx.control_period_s, 1.0));
    if (m.Add(k.in.current, *x.samples, weight, x.util.value_or(-1))) {
      (*lp == Phase::kLoad ? t.samples_load : t.samples_compute) += *x.samples * dt;
      t.train_s += dt;
    }
  }
}

}  // namespace

std::string TrainingNum(double v) {
  char buf[32];
  if (std::abs(v) >= 100 || v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  return buf;
}

TrainingInputs ReadTrainingInputs(const WorkloadSignals& s) {
  TrainingInputs x;
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

TrainingFits::Slots TrainingFits::Find(PersistentState& s) {
  // Made once: three of the four keys are past the small-string size.
  static const std::array<std::string, 4> keys = {"tr.load.buckets", "tr.compute.buckets",
                                                  "tr.dur_load.buckets", "tr.dur_eval.buckets"};
  return {&s.Vec(keys[0]), &s.Vec(keys[1]), &s.Vec(keys[2]), &s.Vec(keys[3])};
}

TrainingFits TrainingFits::Load(const Slots& slots, const ThroughputPrior& prior) {
  return {ThroughputModel::LoadFrom(*slots[0], prior), ThroughputModel::LoadFrom(*slots[1], prior),
          ThroughputModel::LoadFrom(*slots[2], prior), ThroughputModel::LoadFrom(*slots[3], prior)};
}

void TrainingFits::Save(const Slots& slots) const {
  load.SaveTo(*slots[0]);
  compute.SaveTo(*slots[1]);
  dur_load.SaveTo(*slots[2]);
  dur_eval.SaveTo(*slots[3]);
}

namespace {

ThroughputPrior PriorFor(const TrainingConfig& c, const TrainingState& t) {
  ThroughputPrior prior;
  prior.efficiency = c.expected_efficiency;
  prior.reference_nodes = t.reference;
  prior.compute_bound_util = c.compute_bound_util;
  return prior;
}

TrainingState LoadState(const TrainingConfig& c, const PolicyInput& in,
                        const TrainingStateSlots& slots) {
  TrainingState t = slots.Load();
  if (!t.initialized) {
    t.initialized = true;
    t.last_asked = in.current;
    t.reference = c.reference_replicas > 0 ? c.reference_replicas : in.current;
    t.prev_current = in.current;
    t.prev_ready = in.ready;
    t.last_tick = SinceEpochSeconds(in.now);
  }
  return t;
}

}  // namespace

TrainingTick::TrainingTick(const TrainingConfig& cfg, const WorkloadContext& wctx,
                           const PolicyInput& pin, PersistentState& st)
    : c(cfg),
      ctx(wctx),
      in(pin),
      state(st),
      now(SinceEpochSeconds(pin.now)),
      g(std::max(1, wctx.granularity)),
      x(ReadTrainingInputs(pin.signals)),
      slots(st),
      t(LoadState(cfg, pin, slots)),
      fit_slots(TrainingFits::Find(st)),
      fits(TrainingFits::Load(fit_slots, PriorFor(cfg, t))) {}

double TrainingTick::Y(const ThroughputModel& m, int n) {
  return m.SecondsPerSample(n).value_or(kTrainingHuge);
}

double TrainingTick::PhaseTime(Phase p, int n, bool current_phase) const {
  // A load seen to be IO-bound takes as long on any size from io_size up (storage sets its
  // pace); below, the nodes' own ingest does.
  if (p == Phase::kLoad && t.io_size > 0) return std::max(1.0, static_cast<double>(t.io_size) / n);
  const ThroughputModel& d = p == Phase::kLoad ? fits.dur_load : fits.dur_eval;
  if (d.HasData()) return d.SecondsPerSample(n).value_or(kTrainingHuge);
  if (current_phase && phase_util >= 0) {
    // Prior: the GPUs' idle share is waiting that more nodes do not shorten.
    const double sigma = std::clamp(1 - phase_util / c.compute_bound_util, 0.0, 0.98);
    return sigma + (1 - sigma) / n;
  }
  return fits.compute.SecondsPerSample(n).value_or(kTrainingHuge);
}

void TrainingTick::Save() {
  slots.Save(t);
  fits.Save(fit_slots);
}

void ObserveTick(TrainingTick& k) {
  const double period = k.ctx.control_period_s;
  const double dt = std::clamp(k.now - k.t.last_tick, 0.0, 10 * std::max(period, 1.0));
  k.t.last_tick = k.now;
  RefillTokens(k);
  TrackSizeChanges(k);
  TrackPhase(k, dt);
  Learn(k, dt);
  Recommendation& rec = k.rec;
  // The 8 below and a rule's: RuleRescale, the longest, adds about 40 (its evidence included).
  rec.facts.reserve(48);
  rec.desired = k.in.current;
  rec.valid = true;
  k.Fact("current", k.in.current);
  k.Fact("ready", k.in.ready);
  k.Fact("last_asked", k.t.last_asked);
  k.Fact("reference_replicas", k.t.reference);
  if (k.x.samples) k.Fact("samples_per_s", *k.x.samples);
  if (k.x.remaining) k.Fact("samples_remaining", *k.x.remaining);
  if (k.ph.phase) k.Fact("phase", static_cast<double>(*k.ph.phase));
  k.Fact("rescale_tokens", k.t.tokens);
}

double TrainingTick::SecondsToTokens(double want) const {
  if (t.tokens >= want - 1e-9) return 0;  // refills summed tick by tick
  if (want > c.rescale_burst || c.rescales_per_hour <= 0) return kTrainingHuge;
  return (want - t.tokens) * 3600 / c.rescales_per_hour;
}

}  // namespace aiscale::decide
