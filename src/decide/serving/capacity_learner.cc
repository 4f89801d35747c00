#include "decide/serving/capacity_learner.h"

#include <algorithm>
#include <cmath>

#include "decide/text.h"

namespace aiscale::decide::serving {
namespace {

// Bins are stored flat: [index, held weight, broke weight] per bin, by index.
constexpr size_t kStride = 3;

}  // namespace

CapacityLearner::CapacityLearner(const CapacityParams& p, PersistentState& state,
                                 std::string_view prefix)
    : p_(p), state_(state) {
  est_key_ = StrCat(prefix, "est");
  time_key_ = StrCat(prefix, "t");
  bins_key_ = StrCat(prefix, "bins");
  peak_t_key_ = StrCat(prefix, "peak.t");
  peak_v_key_ = StrCat(prefix, "peak.v");
  ceil_key_ = StrCat(prefix, "ceil");
  lift_key_ = StrCat(prefix, "lift");
}

double CapacityLearner::estimate() const { return std::max(0.0, state_.Get(est_key_, 0)); }

void CapacityLearner::Decay(double now_s) {
  const double last = state_.Get(time_key_, now_s);
  const double dt = std::clamp(now_s - last, 0.0, 86400.0);
  if (dt <= 0) return;
  const double f = std::exp2(-dt / p_.half_life_s);
  std::vector<double>& bins = state_.Vec(bins_key_);
  std::vector<double> kept;
  kept.reserve(bins.size());
  for (size_t i = 0; i + kStride <= bins.size(); i += kStride) {
    const double held = bins[i + 1] * f, broke = bins[i + 2] * f;
    if (held + broke < 0.05) continue;  // forgotten
    kept.insert(kept.end(), {bins[i], held, broke});
  }
  bins.swap(kept);
}

void CapacityLearner::Add(double load, bool held, double weight) {
  const double k = std::floor(std::log(load) / std::log(p_.bin_ratio));
  std::vector<double>& bins = state_.Vec(bins_key_);
  size_t i = 0;
  while (i + kStride <= bins.size() && bins[i] < k) i += kStride;
  if (i + kStride > bins.size() || bins[i] != k) {
    bins.insert(bins.begin() + static_cast<std::ptrdiff_t>(i), {k, 0, 0});
  }
  bins[i + (held ? 1 : 2)] += weight;
}

double CapacityLearner::RecentPeak(double load, double now_s) {
  std::vector<double>& t = state_.Vec(peak_t_key_);
  std::vector<double>& v = state_.Vec(peak_v_key_);
  if (t.size() != v.size()) {
    t.clear();
    v.clear();
  }
  while (!v.empty() && v.back() <= load) {
    t.pop_back();
    v.pop_back();
  }
  t.push_back(now_s);
  v.push_back(load);
  size_t expired = 0;
  while (expired + 1 < t.size() && t[expired] < now_s - p_.latency_slo_s) ++expired;
  t.erase(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(expired));
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(expired));
  return v.front();
}

CapacityLearner::Evidence CapacityLearner::Read() const {
  Evidence ev;
  const std::vector<double>* bins = state_.FindVec(bins_key_);
  if (!bins || bins->empty()) return ev;
  // The share of windows that broke can only grow with the load: fit that (pool adjacent
  // violators, by weight), so one unlucky bin among good ones is outvoted by its neighbours.
  struct Block {
    double lo_k, hi_k, held, broke;
    double Share() const { return broke / std::max(held + broke, 1e-12); }
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i + kStride <= bins->size(); i += kStride) {
    blocks.push_back({(*bins)[i], (*bins)[i], (*bins)[i + 1], (*bins)[i + 2]});
    while (blocks.size() > 1 && blocks[blocks.size() - 2].Share() > blocks.back().Share()) {
      Block& a = blocks[blocks.size() - 2];
      a.hi_k = blocks.back().hi_k;
      a.held += blocks.back().held;
      a.broke += blocks.back().broke;
      blocks.pop_back();
    }
  }
  // The lowest block where most windows broke bounds the capacity from above; below it, the
  // top of the highest block where most held is the highest load at which the SLO held.
  for (const Block& b : blocks) {
    if (b.held + b.broke < p_.min_weight) continue;
    if (b.Share() > 0.5) {
      ev.broke_at = std::pow(p_.bin_ratio, b.lo_k);
      break;
    }
    ev.held_at = std::pow(p_.bin_ratio, b.hi_k + 1);
  }
  return ev;
}

double CapacityLearner::Extrapolate(const CapacitySample& s, std::optional<double> u,
                                    const std::string& key, bool held, double now_s) {
  const double prev = std::max(0.0, state_.Get(key, 0));
  const bool usable =
      held && s.clean && u && *u >= p_.util_min && *u <= 1 && s.load > 0 && std::isfinite(s.load);
  if (!usable) return prev;
  const double x = s.load * p_.util_fill / *u;
  const double dt = std::clamp(now_s - state_.Get(time_key_, now_s), 0.0, p_.util_tau_s);
  // The first window seeds it; later ones move it by their share of the smoothing span,
  // weighted by how busy they were: an extrapolation from a fuller replica is the nearer one.
  // Down it moves faster than up (a replica already past the fill shows the ceiling is lower).
  double a = prev == 0 ? 1 : (1 - std::exp(-std::max(dt, 1.0) / p_.util_tau_s)) * *u;
  if (x < prev) a = std::max(a, std::min(1.0, *u));
  const double next = prev + a * (x - prev);
  state_.Set(key, next);
  return next;
}

double CapacityLearner::Vote(const CapacitySample& s, bool held) const {
  if (held || s.requests <= 0) return 1;
  // Queueing shows in the first token first: a window whose TTFT held and whose latency did
  // not, over fewer requests than the SLO lets miss one of, is one long answer.
  const bool ttft_held = !s.ttft_p99_s || *s.ttft_p99_s <= (1 - p_.margin) * p_.ttft_slo_s;
  if (!ttft_held) return 1;
  return std::clamp(s.requests * p_.miss_share, 0.05, 1.0);
}

CapacityState CapacityLearner::Observe(const CapacitySample& s, double now_s) {
  Decay(now_s);
  double ratio = 0;
  if (s.ttft_p99_s) ratio = std::max(ratio, *s.ttft_p99_s / p_.ttft_slo_s);
  if (s.latency_p99_s) ratio = std::max(ratio, *s.latency_p99_s / p_.latency_slo_s);
  const bool usable = s.load > 0 && std::isfinite(s.load);
  // A window's latency quantile speaks for requests that arrived up to a latency limit ago:
  // it is credited to (or blamed on) the most load carried over that span.
  const double load = usable ? RecentPeak(s.load, now_s) : s.load;
  const bool sampled = usable && (s.saturated || (s.clean && (s.ttft_p99_s || s.latency_p99_s)));
  const bool window_held = !s.saturated && ratio <= 1 - p_.margin;
  // A growing queue is strong evidence on its own (the replicas cannot keep up at this load);
  // a window whose p99 went over is one noisy vote among several.
  if (sampled) Add(load, window_held, s.saturated ? p_.min_weight : Vote(s, window_held));
  Evidence ev = Read();
  ev.ceiling = Extrapolate(s, s.utilization, ceil_key_, sampled && window_held, now_s);
  ev.lift = Extrapolate(s, s.busy, lift_key_, sampled && window_held, now_s);
  // The first estimate needs no bin of its own: the load carried while the SLO holds is
  // already a floor under the capacity (the conservative start).
  if (estimate() == 0 && ev.held_at == 0 && sampled && window_held) ev.held_at = load;
  // Healthy now: no backlog lately and this window, if it has quantiles, held. Only then may
  // the estimate rise.
  const bool healthy = s.clean && !s.saturated && ratio <= 1 - p_.margin;
  CapacityState out = Step(ev, !healthy, now_s);
  out.ratio = sampled ? ratio : 0;
  state_.Set(time_key_, now_s);
  return out;
}

CapacityState CapacityLearner::Step(const Evidence& ev, bool breaking, double now_s) {
  CapacityState out;
  out.held_at = ev.held_at;
  out.broke_at = ev.broke_at;
  out.ceiling = ev.ceiling;
  out.lift = ev.lift;
  const double est = estimate();
  const double minutes = std::clamp((now_s - state_.Get(time_key_, now_s)) / 60, 0.0, 1.0);
  double next = est;
  // Probes start from the evidence, not from the last probe: stepping a bin beyond the
  // estimate itself would walk it up to the cap on a steady load that never tests it.
  const double base = ev.held_at > 0 ? ev.held_at : est;
  // Above both the utilization ceiling and every load that held: the replicas would run past
  // the fill there, so fall toward the higher of the two.
  const double roof = std::max(ev.ceiling, ev.held_at);
  if (ev.ceiling > 0 && est > roof * p_.bin_ratio &&
      !(ev.broke_at > 0 && ev.broke_at / p_.bin_ratio < roof)) {
    out.target = roof;
    next = std::max(out.target, est * (1 - p_.max_fall_per_min * minutes));
    out.reason = StrCat("falling toward ", Num(out.target), ": replicas would be ",
                        "fuller than the fill there (ceiling ", Num(ev.ceiling), "/s per replica)");
  } else if (ev.broke_at > 0 && (est == 0 || est > ev.broke_at / p_.bin_ratio)) {
    // Just under the lowest load at which the SLO broke (never below where it held).
    out.target = std::max(ev.held_at, ev.broke_at / p_.bin_ratio);
    next = est == 0 ? out.target : std::max(out.target, est * (1 - p_.max_fall_per_min * minutes));
    out.reason = StrCat("falling toward ", Num(out.target), ": the SLO broke at ", Num(ev.broke_at),
                        "/s per replica");
  } else if (est == 0 && ev.held_at > 0) {
    next = out.target = ev.held_at;  // the conservative start
    out.reason = StrCat("first estimate ", Num(next), ": the SLO held at that load");
  } else if (base > 0) {
    // Probe one bin beyond while nothing broke near: the policy sizes with the estimate plus
    // headroom, so the load it runs at reaches the capacity only once the estimate is above it;
    // the first windows that break there pull it back under them.
    const bool room = ev.broke_at == 0 || ev.broke_at > base * p_.bin_ratio * p_.bin_ratio;
    out.target = room ? base * p_.bin_ratio : base;
    // Toward the utilization ceiling (or the GPU busy floor), but never into a bin where the
    // SLO broke.
    const double toward = std::max(ev.ceiling, ev.lift);
    if (room && toward > out.target) {
      out.target = ev.broke_at > 0 ? std::min(toward, ev.broke_at / p_.bin_ratio) : toward;
      out.target = std::max(out.target, base * p_.bin_ratio);
    }
    // Never more than twice the highest load the SLO held at: a probe, not a runaway.
    out.target = std::min(out.target, std::max(est, 2 * ev.held_at));
    if (out.target > est && !breaking) {
      const bool far = ev.broke_at == 0 || ev.broke_at > 2 * est;
      const double rise = far ? p_.fast_rise_per_min : p_.max_rise_per_min;
      next = std::min(out.target, est * (1 + rise * minutes));
      out.reason = StrCat("rising toward ", Num(out.target), ": the SLO holds (held up to ",
                          Num(ev.held_at), "/s per replica, broke at ",
                          ev.broke_at > 0 ? StrCat(Num(ev.broke_at), "/s") : "none", ")");
    } else {
      out.reason = StrCat("held: the SLO held up to ", Num(ev.held_at), "/s per replica",
                          breaking ? " and breaks now" : "");
    }
  } else {
    out.reason = "not learned yet";
  }
  if (est > 0 && !(next >= est / 2)) {  // also NaN
    return Hold(StrCat("refused an update from ", Num(est), " to ", Num(next),
                       " (a collapse, not a measurement)"));
  }
  state_.Set(est_key_, next);
  out.estimate = next;
  return out;
}

CapacityState CapacityLearner::Hold(std::string reason) const {
  CapacityState out;
  out.estimate = estimate();
  out.refused = true;
  out.reason = StrCat("capacity held at ", Num(out.estimate), ": ", reason);
  return out;
}

}  // namespace aiscale::decide::serving
