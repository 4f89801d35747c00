#include "decide/training/phase_detector.h"

#include <algorithm>
#include <cmath>

#include "decide/text.h"

namespace aiscale::decide {
namespace {

using signals::Phase;

constexpr double kNoSamples = 1e-9;

std::optional<Phase> FromState(double v) {
  if (v < 0 || v > 2 || !std::isfinite(v)) return std::nullopt;
  return static_cast<Phase>(static_cast<int>(v));
}
double ToState(std::optional<Phase> p) { return p ? static_cast<double>(*p) : -1; }

}  // namespace

std::optional<Phase> PhaseDetector::Classify(const PhaseReading& r,
                                             std::optional<Phase> current) const {
  if (r.reported) return r.reported;
  if (!r.samples_per_s) return std::nullopt;
  const bool samples = *r.samples_per_s > kNoSamples;
  if (!r.gpu_util) {
    // Without utilization only "training samples flow" is known: not enough to tell load
    // from compute, so keep a known training phase.
    if (samples && current && *current != Phase::kEval) return current;
    return std::nullopt;
  }
  const double u = *r.gpu_util;
  // The band moves the threshold away from the current phase, so leaving it needs a margin.
  if (samples) {
    double load_max = c_.load_util_max;
    if (current == Phase::kLoad) load_max += c_.hysteresis;
    if (current == Phase::kCompute) load_max -= c_.hysteresis;
    return u < load_max ? Phase::kLoad : Phase::kCompute;
  }
  // No training samples: idle GPUs are a restart (says nothing); low utilization is input
  // loading; mid to high utilization is evaluation.
  if (u < c_.idle_util_max) return std::nullopt;
  double load_max = c_.load_util_max;
  if (current == Phase::kLoad) load_max += c_.hysteresis;
  if (current == Phase::kEval) load_max -= c_.hysteresis;
  return u < load_max ? Phase::kLoad : Phase::kEval;
}

PhaseKeys::PhaseKeys(std::string_view prefix)
    : phase(StrCat(prefix, ".phase")),
      since(StrCat(prefix, ".since")),
      cand(StrCat(prefix, ".cand")),
      cand_since(StrCat(prefix, ".cand_since")),
      len(StrCat(prefix, ".len")),
      count(StrCat(prefix, ".count")),
      var(StrCat(prefix, ".var")) {}

PhaseEstimate PhaseDetector::Update(const PhaseReading& r, double now_s, PersistentState& state,
                                    const std::string& prefix) const {
  return Update(r, now_s, state, PhaseKeys(prefix));
}

PhaseEstimate PhaseDetector::Update(const PhaseReading& r, double now_s, PersistentState& state,
                                    const PhaseKeys& keys) const {
  std::optional<Phase> cur = FromState(state.Get(keys.phase, -1));
  double since = state.Get(keys.since, now_s);
  std::vector<double>& len = state.Vec(keys.len);
  std::vector<double>& count = state.Vec(keys.count);
  std::vector<double>& var = state.Vec(keys.var);
  len.resize(3, 0);
  count.resize(3, 0);
  var.resize(3, 0);

  PhaseEstimate e;
  double change_at = now_s;
  const std::optional<Phase> seen = Classify(r, cur);
  std::optional<Phase> next = cur;
  if (r.reported) {
    next = r.reported;
    e.source = "reported";
    state.Set(keys.cand, -1);
  } else if (!seen || seen == cur) {
    e.source = cur ? (seen ? "inferred" : "held") : "unknown";
    state.Set(keys.cand, -1);
  } else {
    // A different phase: adopt it once it has persisted dwell_s (at once when none is known).
    if (FromState(state.Get(keys.cand, -1)) != seen) {
      state.Set(keys.cand, ToState(seen));
      state.Set(keys.cand_since, now_s);
    }
    const double cand_since = state.Get(keys.cand_since, now_s);
    if (!cur || now_s - cand_since >= c_.dwell_s) {
      next = seen;
      // The change happened when it was first seen, not when the dwell ran out.
      if (cur) change_at = std::max(since, cand_since);
      state.Set(keys.cand, -1);
    }
    e.source = "inferred";
  }

  if (next != cur) {
    if (cur) {
      const int i = static_cast<int>(*cur);
      const double d = change_at - since;
      const double a = c_.length_ewma;
      if (count[i] == 0) {
        len[i] = d;
        var[i] = 0.25 * d * d;  // one length says little about the next: sd = half of it
      } else {
        const double dev = d - len[i];
        len[i] += a * dev;
        var[i] = (1 - a) * (var[i] + a * dev * dev);
      }
      count[i] += 1;
      e.ended = cur;
      e.ended_length_s = d;
    }
    since = change_at;
    e.changed = cur.has_value();
    state.Set(keys.phase, ToState(next));
  }
  state.Set(keys.since, since);
  e.phase = next;
  if (!next) return e;
  const int i = static_cast<int>(*next);
  e.elapsed_s = std::max(0.0, now_s - since);
  if (count[i] > 0) {
    e.typical_length_s = len[i];
    e.length_sd_s = std::sqrt(std::max(0.0, var[i]));
    e.expected_remaining_s = std::max(0.0, len[i] - e.elapsed_s);
    e.cautious_remaining_s = std::max(0.0, len[i] - *e.length_sd_s - e.elapsed_s);
  } else {
    e.expected_remaining_s = e.elapsed_s;
    e.cautious_remaining_s = e.elapsed_s;
  }
  return e;
}

}  // namespace aiscale::decide
