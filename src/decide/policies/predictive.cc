#include "decide/policies/predictive.h"

#include <algorithm>
#include <cmath>

#include "core/numeric.h"
#include "decide/text.h"

namespace aiscale::decide {
namespace {

// "%.4g" as printf writes it (decide/text.h).

// Keys of the policy's PersistentState; prefixes for the forecaster and error views.
constexpr const char* kAgg = "agg";     // [open bucket index, sum of tick values, tick count]
constexpr const char* kDownT = "sd.t";  // scale-down window: times (s) of a monotone max-queue
constexpr const char* kDownV = "sd.v";  // ... and its values, decreasing front to back
constexpr const char* kLastDown = "sd.last_down";

}  // namespace

PredictivePolicy::PredictivePolicy(PredictiveConfig cfg) : cfg_(std::move(cfg)) {
  cfg_.smoothing.season_buckets = cfg_.season_buckets();
  // Score the seasonal model against level+trend at the horizon the policy acts on.
  cfg_.smoothing.score_horizon = cfg_.horizon_buckets();
  if (cfg_.long_season_s > 0) {
    cfg_.smoothing.long_slot_buckets =
        static_cast<int>(std::lround(cfg_.long_season_slot_s / cfg_.bucket_s));
    cfg_.smoothing.long_season_slots =
        static_cast<int>(std::lround(cfg_.long_season_s / cfg_.long_season_slot_s));
  } else {
    cfg_.smoothing.long_season_slots = 0;
  }
  eq_params_.window = static_cast<size_t>(std::max(1.0, cfg_.margin_window_s / cfg_.bucket_s));
  eq_params_.quantile = cfg_.quantile;
  eq_params_.mode = cfg_.margin_mode;
  // Below one replica's worth the ceil() already leaves that much head-room (docs).
  eq_params_.relative_floor = cfg_.capacity_per_replica * cfg_.target_utilization;
  eq_params_.pending = static_cast<size_t>(cfg_.horizon_buckets()) + 1;
  lead_text_ = StrCat(Num(cfg_.lead_s));
  quantile_text_ = StrCat(Num(cfg_.quantile * 100));
}

std::vector<std::string> PredictivePolicy::Signals() const {
  std::vector<std::string> out{cfg_.signal};
  if (cfg_.reactive.signal != cfg_.signal) out.push_back(cfg_.reactive.signal);
  return out;
}

int PredictivePolicy::NeedFor(double demand) const {
  const double x = demand / (cfg_.capacity_per_replica * cfg_.target_utilization);
  if (x <= cfg_.idle_fraction) return 0;
  // Saturates at kMaxReplicaCount: a need of 1e12 must recommend the most, never wrap to 1.
  return ReplicaCountCeil(x);
}

PredictivePolicy::Reactive PredictivePolicy::ReactiveNeed(const PolicyInput& in) const {
  const ReactiveRule& r = cfg_.reactive;
  const SignalSnapshot& snap = in.signals.Get(r.signal);
  Reactive out;
  if (!snap.ok() || snap.AnyNegative()) return out;
  const bool sum = r.aggregate == ReactiveRule::Aggregate::kSum;
  out.value = sum ? snap.sum : snap.mean;
  if (r.window_s > 0) {
    const TimeSeries& h = sum ? in.signals.SumHistory(r.signal) : in.signals.MeanHistory(r.signal);
    if (auto m = h.WindowMean(in.now, Seconds(r.window_s))) out.value = *m;
  }
  const double replicas = sum ? out.value / r.target : out.value * std::max(in.ready, 1) / r.target;
  // Strict: any demand at all needs a replica (scale-from-zero must not wait for a forecast).
  out.need = replicas > 0 ? std::max(1, ReplicaCountCeil(replicas)) : 0;
  out.ok = true;
  return out;
}

void PredictivePolicy::Aggregate(const PolicyInput& in, PersistentState& state,
                                 forecast::HoltWinters& hw, forecast::ErrorQuantile& eq) const {
  const int64_t bucket =
      static_cast<int64_t>(std::floor(SinceEpochSeconds(in.now) / cfg_.bucket_s));
  std::vector<double>& agg = state.Vec(kAgg);
  // Restored state is input: a bucket that is not finite or lies ahead, or a negative count,
  // starts the open bucket over.
  if (agg.size() != 3 || !std::isfinite(agg[0] + agg[1] + agg[2]) ||
      agg[0] > static_cast<double>(bucket) || agg[2] < 0) {
    agg.assign({static_cast<double>(bucket), 0, 0});
  }
  const int64_t open = SaturatingToInt64(agg[0]);
  if (bucket > open) {
    if (agg[2] > 0) {
      // Score the forecast made `horizon` buckets ago, learn, then forecast as far again.
      const double y = agg[1] / agg[2];
      eq.RecordActual(open, y);
      hw.Observe(open, y);
      const int64_t target = open + cfg_.horizon_buckets();
      eq.RecordForecast(target, hw.Forecast(target));
    }
    agg.assign({static_cast<double>(bucket), 0, 0});
  }
  const SignalSnapshot& demand = in.signals.Get(cfg_.signal);
  if (demand.ok() && !demand.AnyNegative()) {
    agg[1] += demand.sum;
    agg[2] += 1;
  }
}

int PredictivePolicy::SlowDown(int raw, const PolicyInput& in, PersistentState& state) const {
  const double now_s = SinceEpochSeconds(in.now);
  std::vector<double>& t = state.Vec(kDownT);
  std::vector<double>& v = state.Vec(kDownV);
  // Restored state is input: the window is a deque of times rising and sizes falling; anything
  // else (a NaN read as 0 replicas for good) starts it over.
  bool sane = t.size() == v.size();
  for (size_t i = 0; sane && i < t.size(); ++i) {
    sane = std::isfinite(t[i]) && std::isfinite(v[i]) && v[i] >= 0 && t[i] <= now_s &&
           (i == 0 || (t[i] >= t[i - 1] && v[i] < v[i - 1]));
  }
  if (!sane) {
    t.clear();
    v.clear();
  }
  // A policy that has seen nothing yet counts the size it found as its window's first value:
  // one tick of evidence (a quiet first scrape) must not undo a size someone chose.
  if (t.empty()) {
    t.push_back(now_s);
    v.push_back(in.current);
  }
  while (!v.empty() && v.back() <= raw) {
    t.pop_back();
    v.pop_back();
  }
  t.push_back(now_s);
  v.push_back(raw);
  size_t expired = 0;
  while (expired + 1 < t.size() && t[expired] <= now_s - cfg_.scale_down_window_s) ++expired;
  t.erase(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(expired));
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(expired));
  int desired = ClampToInt(v.front(), 0, kMaxReplicaCount);
  if (cfg_.scale_down_rate > 0 && desired < in.current) {
    if (now_s - state.Get(kLastDown, -1e18) < 60) {
      desired = in.current;
    } else {
      const int step = std::max(1, static_cast<int>(std::floor(in.current * cfg_.scale_down_rate)));
      desired = std::max(desired, in.current - step);
      state.Set(kLastDown, now_s);
    }
  }
  return desired;
}

Recommendation PredictivePolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  const double now_s = SinceEpochSeconds(in.now);
  const int64_t bucket = static_cast<int64_t>(std::floor(now_s / cfg_.bucket_s));
  // Time before the state's own: a new monotonic epoch (restart on another boot). Nothing
  // learned can be placed on the new time line, so start over rather than misalign seasons.
  const std::vector<double>* agg = state.FindVec(kAgg);
  const bool reset = agg && agg->size() == 3 && bucket < SaturatingToInt64((*agg)[0]);
  if (reset) state.values.clear();

  forecast::HoltWinters hw(cfg_.smoothing, state, "hw.");
  forecast::ErrorQuantile eq(eq_params_, state, "err.");
  Aggregate(in, state, hw, eq);

  // The replicas asked for now serve from now + cold start until the next decision's arrive
  // (now + lead): size for the largest forecast over that span.
  double f = 0;
  if (hw.observed() > 0) {
    const int64_t first = hw.last_index() + 1;
    const auto at = [&](double s) { return static_cast<int64_t>(std::floor(s / cfg_.bucket_s)); };
    const int64_t lo = std::max(first, at(now_s + cfg_.lead_s - cfg_.control_period_s));
    const int64_t hi = std::min(std::max(lo, at(now_s + cfg_.lead_s)), lo + 64);
    for (int64_t j = lo; j <= hi; ++j) f = std::max(f, hw.Forecast(j));
  }
  const double margin = eq.Margin(f);
  const bool trusted = eq.count() >= static_cast<size_t>(cfg_.min_errors);
  const int forecast_need = NeedFor(f + margin);
  const Reactive reactive = ReactiveNeed(in);
  const SignalSnapshot& demand = in.signals.Get(cfg_.signal);

  Recommendation r;
  r.facts.reserve(16);  // the 13 below, state_reset, raw, after_slow_down
  r.facts = {{"forecast", f},
             {"margin", margin},
             {"lead_s", cfg_.lead_s},
             {"reactive_need", reactive.need},
             {"forecast_need", forecast_need},
             {"demand", demand.sum},
             {"reactive_value", reactive.value},
             {"forecast_trusted", trusted ? 1 : 0},
             {"seasonal_ready", hw.seasonal_ready() ? 1 : 0},
             {"seasonal_weight", hw.seasonal_weight()},
             {"history_buckets", static_cast<double>(hw.observed())},
             {"errors", static_cast<double>(eq.count())},
             {"error_quantile", eq.Quantile()}};
  if (reset) r.facts.push_back({"state_reset", 1});

  if (!demand.ok() || demand.AnyNegative()) {
    const std::string why = demand.ok() ? cfg_.signal + " has a negative value (not a demand)"
                                        : cfg_.signal + " is " +
                                              std::string(SignalStatusName(demand.status)) + " (" +
                                              demand.detail + ")";
    if (reactive.ok && reactive.need > in.current) {
      r.desired = reactive.need;
      r.valid = true;
      r.rule = "reactive";
      r.reason = why + "; reactive " + cfg_.reactive.signal + " needs " +
                 std::to_string(reactive.need) + ": scaling up only";
    } else {
      r.desired = in.current;
      r.rule = "missing_data";
      r.reason = why + ": holding, never scaling down on missing data";
    }
    return r;
  }
  if (!reactive.ok && !trusted) {
    r.desired = in.current;
    r.rule = "missing_data";
    r.reason = "reactive " + cfg_.reactive.signal +
               " has no data and the forecast is not trusted yet: holding";
    return r;
  }

  int raw = 0;
  if (!trusted) {
    raw = reactive.need;
    r.rule = "fallback_reactive";
    r.reason = StrCat("forecast not trusted yet (", eq.count(), " of ", cfg_.min_errors,
                      " scored buckets); reactive needs ", reactive.need);
  } else {
    raw = std::max(forecast_need, reactive.need);
    r.rule = forecast_need >= reactive.need ? "forecast" : "reactive";
    r.reason =
        StrCat("forecast ", Num(f), " at now+", lead_text_, "s + margin ", Num(margin), " (p",
               quantile_text_, " of ", eq.count(), " misses) needs ", forecast_need, "; reactive ");
    if (reactive.ok) {
      StrAppend(r.reason, "needs ", reactive.need);
    } else {
      r.reason += "has no data";
    }
  }
  if (!cfg_.scale_to_zero) raw = std::max(raw, 1);
  const int desired = SlowDown(raw, in, state);
  r.facts.push_back({"raw", raw});
  r.facts.push_back({"after_slow_down", desired});
  r.desired = desired;
  r.valid = true;
  if (desired > raw) {
    r.rule = "hold_down";
    StrAppend(r.reason, "; held at ", desired, " by the ", Num(cfg_.scale_down_window_s),
              " s scale-down window", cfg_.scale_down_rate > 0 ? " and rate limit" : "");
  }
  if (!reactive.ok && r.desired < in.current) {
    r.desired = in.current;
    r.rule = "missing_data";
    r.reason += "; reactive " + cfg_.reactive.signal + " has no data: not scaling down";
  }
  return r;
}

}  // namespace aiscale::decide
