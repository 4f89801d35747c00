#include "decide/policies/kpa.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "core/numeric.h"
#include "decide/text.h"

namespace aiscale::decide {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
// PersistentState keys. Times are kept as {whole seconds, nanoseconds} so that the window
// comparisons stay exact to the nanosecond after a save and load.
// Looked up as string_view (PersistentState's comparator is transparent): no string is built.
constexpr std::string_view kInitialized = "kpa.initialized";
constexpr std::string_view kPanicTime = "kpa.panic_time";
constexpr std::string_view kMaxPanicPods = "kpa.max_panic_pods";
constexpr std::string_view kLastNonzero = "kpa.last_nonzero";

int64_t FloorSecond(TimePoint t) {
  const int64_t ns = t.time_since_epoch().count();
  return ns >= 0 ? ns / kNsPerSecond : -((-ns + kNsPerSecond - 1) / kNsPerSecond);
}

void SetTime(PersistentState& s, std::string_view key, std::optional<TimePoint> t) {
  std::vector<double>& v = s.Vec(key);
  v.clear();
  if (!t) return;
  const int64_t sec = FloorSecond(*t);
  v = {static_cast<double>(sec),
       static_cast<double>(t->time_since_epoch().count() - sec * kNsPerSecond)};
}

std::optional<TimePoint> GetTime(const PersistentState& s, std::string_view key) {
  const std::vector<double>* v = s.FindVec(key);
  if (v == nullptr || v->size() != 2) return std::nullopt;
  // Restored state is data: saturate rather than overflow on a corrupt or foreign value.
  return TimePoint(Duration(SaturatingAdd(SaturatingMul(SaturatingToInt64((*v)[0]), kNsPerSecond),
                                          SaturatingToInt64((*v)[1]))));
}

// "%.6g" as printf writes it (decide/text.h).

Recommendation Hold(std::string rule, std::string reason) {
  Recommendation r;
  r.valid = false;
  r.rule = std::move(rule);
  r.reason = std::move(reason);
  return r;
}

}  // namespace

KpaConfig KpaConfig::Parse(const config::ConfigNode& node) {
  KpaConfig c;
  c.signal = node.String("signal", c.signal);
  c.target = node.Number("target", c.target, config::AtLeast(0.01));
  c.target_utilization =
      node.Number("target_utilization", c.target_utilization, config::Between(0.01, 1.0));
  c.stable_window_s =
      node.DurationSeconds("stable_window", c.stable_window_s, config::Between(6, 3600));
  if (c.stable_window_s != std::floor(c.stable_window_s)) {
    node.ErrorAt("stable_window",
                 StrCat("must be a whole number of seconds (the KPA averages 1 s buckets), got ",
                        Num(c.stable_window_s, 6)));
  }
  c.panic_window_percentage =
      node.Number("panic_window_percentage", c.panic_window_percentage, config::Between(1, 100));
  c.panic_threshold_percentage = node.Number(
      "panic_threshold_percentage", c.panic_threshold_percentage, config::Between(110, 1000));
  c.max_scale_up_rate = node.Number("max_scale_up_rate", c.max_scale_up_rate, config::Above(1));
  c.max_scale_down_rate =
      node.Number("max_scale_down_rate", c.max_scale_down_rate, config::Above(1));
  c.activation_scale =
      node.Int("activation_scale", c.activation_scale, config::Between(1, kMaxReplicaCount));
  c.scale_to_zero_grace_period_s = node.DurationSeconds(
      "scale_to_zero_grace_period", c.scale_to_zero_grace_period_s, config::AtLeast(6));
  c.allow_zero_initial_scale = node.Bool("allow_zero_initial_scale", c.allow_zero_initial_scale);
  c.activation_signal = node.String("activation_signal", c.activation_signal);
  if (!c.activation_signal.empty() && c.activation_signal == c.signal) {
    node.ErrorAt("activation_signal", "must differ from signal '" + c.signal + "'");
  }
  return c;
}

KpaParams KpaConfig::Params() const {
  KpaParams p;
  p.target = target * target_utilization;
  p.panic_threshold = panic_threshold_percentage / 100.0;
  p.max_scale_up_rate = max_scale_up_rate;
  p.max_scale_down_rate = max_scale_down_rate;
  p.activation_scale = activation_scale;
  p.stable_window = Seconds(stable_window_s);
  return p;
}

KpaPolicy::KpaPolicy(KpaConfig c)
    : c_(std::move(c)), params_(c_.Params()), target_text_(StrCat(Num(params_.target, 6))) {}

std::vector<std::string> KpaPolicy::OptionalSignals() const {
  if (c_.activation_signal.empty()) return {};
  return {c_.activation_signal};
}

std::vector<KpaBucket> KpaBucketsFromSamples(const std::vector<Sample>& samples, TimePoint now,
                                             int window_buckets) {
  const int64_t now_s = FloorSecond(now);
  std::vector<KpaBucket> out;
  if (samples.empty()) return out;
  // One bucket per second from the first sample to now at most; the policy's history spans
  // two windows, so this reserves once for it.
  const int64_t span = now_s - FloorSecond(samples.front().at) + 1;
  out.reserve(static_cast<size_t>(std::clamp<int64_t>(span, 0, 2 * int64_t{window_buckets} + 2)));
  size_t i = 0;
  while (i < samples.size()) {
    // Average the samples of each second first: each one is already a total over replicas.
    const int64_t from = FloorSecond(samples[i].at);
    double sum = samples[i].value;
    int count = 1;
    for (++i; i < samples.size() && FloorSecond(samples[i].at) == from; ++i) {
      sum += samples[i].value;
      ++count;
    }
    const double value = sum / count;
    const int64_t next = i < samples.size() ? FloorSecond(samples[i].at) : now_s + 1;
    // A whole window without samples is a real gap (Knative resets there), not a long tick.
    const int64_t to = next - from >= window_buckets ? from : next - 1;
    for (int64_t s = from; s <= to && s <= now_s; ++s) out.push_back({s, value});
  }
  return out;
}

Recommendation KpaPolicy::Activate(const PolicyInput& in, PersistentState& state) const {
  const SignalSnapshot& main = in.signals.Get(c_.signal);
  const SignalSnapshot& act = in.signals.Get(c_.activation_signal);
  const std::string why = c_.signal + " is " + std::string(SignalStatusName(main.status));
  if (!act.ok()) {
    return Hold("no_data", why + " and " + c_.activation_signal + " is " +
                               std::string(SignalStatusName(act.status)) + "; holding at " +
                               std::to_string(in.current));
  }
  Recommendation r;
  r.facts = {{"activation_demand", act.sum}, {"target", params_.target}, {"ready", 0.0}};
  if (act.sum <= 0) {
    if (in.current > 0) {
      return Hold("no_data",
                  why + " while " + std::to_string(in.current) + " replicas start; holding");
    }
    r.valid = true;
    r.desired = 0;
    r.rule = "idle_at_zero";
    r.reason = "no replicas and no demand (" + c_.activation_signal + " = 0)";
    return r;
  }
  // Knative's activator demand with zero ready pods: ready counts as 1 for the rate limit.
  const double need = std::ceil(act.sum / params_.target);
  const double capped = std::min(need, std::ceil(params_.max_scale_up_rate));
  r.desired = std::max({in.current, c_.activation_scale, ClampToInt(capped, 0, kMaxReplicaCount)});
  r.valid = true;
  r.rule = "activate";
  r.reason = StrCat(c_.activation_signal, " = ", Num(act.sum, 6), " with no ready replicas: ceil(",
                    Num(act.sum, 6), " / ", target_text_, ") = ", Num(need, 6),
                    ", at least activation_scale ", c_.activation_scale, " -> ", r.desired);
  std::optional<TimePoint> last = in.now;
  SetTime(state, kLastNonzero, last);
  return r;
}

Recommendation KpaPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  if (state.Get(kInitialized, 0) == 0) {
    // Knative starts a new autoscaler in panic when more than one pod is ready, so that a
    // restart (which loses the metric history) cannot scale down before data accumulates.
    state.Set(kInitialized, 1);
    SetTime(state, kPanicTime,
            in.ready > 1 ? std::optional<TimePoint>(in.now) : std::optional<TimePoint>());
    state.Set(kMaxPanicPods, in.ready);
    SetTime(state, kLastNonzero,
            c_.allow_zero_initial_scale ? std::optional<TimePoint>() : std::optional(in.now));
  }

  const SignalSnapshot& snap = in.signals.Get(c_.signal);
  if (!snap.ok()) {
    if (in.ready == 0 && !c_.activation_signal.empty()) return Activate(in, state);
    return Hold("no_data", StrCat(c_.signal, " is ", SignalStatusName(snap.status), " (",
                                  snap.detail, "); holding at ", in.current));
  }
  if (snap.AnyNegative()) {
    return Hold("bad_input", StrCat(c_.signal, " has a negative value (sum ", Num(snap.sum, 6),
                                    "): not a load; holding at ", in.current));
  }

  const int stable_buckets = static_cast<int>(c_.stable_window_s);
  const int panic_buckets = KpaPanicBuckets(params_.stable_window, c_.panic_window_percentage);
  const std::vector<Sample> samples =
      in.signals.SumHistory(c_.signal).Window(in.now, Seconds(2.0 * c_.stable_window_s));
  const std::vector<KpaBucket> buckets = KpaBucketsFromSamples(samples, in.now, stable_buckets);
  const int64_t now_s = FloorSecond(in.now);
  const KpaWindow stable = KpaWindowAverage(buckets, now_s, stable_buckets);
  const KpaWindow panic = KpaWindowAverage(buckets, now_s, panic_buckets);
  // Knative scrapes every second, so a window with no write is a window without traffic; here
  // the newest sample may be a window old and still valid (staleness past the window), and the
  // average would read it as 0 demand.
  if (stable.empty || samples.empty() || in.now - samples.back().at >= params_.stable_window) {
    return Hold("no_data", StrCat("no ", c_.signal, " samples in the last ",
                                  Num(c_.stable_window_s, 6), " s; holding"));
  }

  KpaPanicState ps;
  ps.panic_time = GetTime(state, kPanicTime);
  ps.max_panic_pods = ClampToInt(state.Get(kMaxPanicPods, 0), 0, kMaxReplicaCount);
  if (samples.front().at > in.now - params_.stable_window && in.ready > 1 && !ps.panic_time) {
    // Less than a stable window of history (aiscale restarted: the history is not stored, the
    // state is): as Knative starts a new autoscaler, in panic, so no scale-down comes from the
    // few samples seen since.
    ps.panic_time = in.now;
    ps.max_panic_pods = std::max(ps.max_panic_pods, in.ready);
  }
  const KpaDecision d = KpaScale(params_, stable.value, panic.value, in.ready, in.now, ps);
  SetTime(state, kPanicTime, ps.panic_time);
  state.Set(kMaxPanicPods, ps.max_panic_pods);

  std::optional<TimePoint> last_nonzero = GetTime(state, kLastNonzero);
  if (const std::vector<double>* v = state.FindVec(kLastNonzero);
      !v || !(v->empty() || (v->size() == 2 && std::isfinite((*v)[0] + (*v)[1])))) {
    // Written by SetTime at the first tick, empty only for "never had demand": anything else
    // is garbled state, and demand counts as seen now (the grace runs again, no zero at once).
    last_nonzero = in.now;
  }
  const KpaZeroGate gate = KpaApplyScaleToZero(
      d.desired, in.current, in.now, Seconds(c_.scale_to_zero_grace_period_s), last_nonzero);
  SetTime(state, kLastNonzero, last_nonzero);

  Recommendation r;
  r.valid = true;
  r.desired = gate.desired;
  if (d.in_panic) {
    r.rule = "panic";
    StrAppend(r.reason, "panic (", KpaPanicEventName(d.event), "): ");
  } else {
    r.rule = "stable";
    if (d.event == KpaPanicEvent::kLeft) r.reason = "left panic; ";
  }
  StrAppend(r.reason, "total ", c_.signal, " stable avg ", Num(stable.value, 6), " over ",
            stable_buckets, " s, panic avg ", Num(panic.value, 6), " over ", panic_buckets,
            " s, target ", target_text_, " per replica, ready ", in.ready);
  if (d.in_panic) {
    StrAppend(r.reason, "; desired stable ", d.desired_stable, ", panic ", d.desired_panic,
              ", holding max ", ps.max_panic_pods, " -> ", d.desired);
  } else {
    StrAppend(r.reason, ": ceil(", Num(stable.value, 6), " / ", target_text_,
              ") = ", Num(d.desired_stable_raw, 6), ", limited to [", Num(d.max_scale_down, 6),
              ", ", Num(d.max_scale_up, 6), "] -> ", d.desired);
  }
  if (gate.waiting) {
    r.rule = "scale_to_zero_grace";
    StrAppend(r.reason, "; no demand for ", Num(gate.idle_s, 6), " s of the ",
              Num(c_.scale_to_zero_grace_period_s, 6), " s grace period: holding at 1");
  } else if (d.desired == 0 && gate.desired == 0) {
    r.rule = "scale_to_zero";
    StrAppend(r.reason, "; no demand for ", Num(gate.idle_s, 6), " s (grace ",
              Num(c_.scale_to_zero_grace_period_s, 6), " s): scale to zero");
  }
  r.facts = {{"stable_avg", stable.value},         {"panic_avg", panic.value},
             {"desired_stable", d.desired_stable}, {"desired_panic", d.desired_panic},
             {"panic", d.in_panic ? 1.0 : 0.0},    {"max_panic_pods", ps.max_panic_pods},
             {"max_scale_up", d.max_scale_up},     {"max_scale_down", d.max_scale_down},
             {"target", params_.target},           {"idle_s", gate.idle_s}};
  return r;
}

std::unique_ptr<Policy> MakeKpaPolicy(const config::ConfigNode& node, const WorkloadContext& ctx) {
  (void)ctx;
  node.CheckKnown({"name", "signal", "target", "target_utilization", "stable_window",
                   "panic_window_percentage", "panic_threshold_percentage", "max_scale_up_rate",
                   "max_scale_down_rate", "activation_scale", "scale_to_zero_grace_period",
                   "allow_zero_initial_scale", "activation_signal"});
  return std::make_unique<KpaPolicy>(KpaConfig::Parse(node));
}

}  // namespace aiscale::decide
