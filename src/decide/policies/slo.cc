#include "decide/policies/slo.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/numeric.h"
#include "decide/serving/lead_learner.h"
#include "decide/text.h"

namespace aiscale::decide {
namespace {

constexpr const char* kClock = "slo.t";        // the last tick's time: a new epoch resets the state
constexpr const char* kQueue = "slo.q";        // the last tick's queue
constexpr const char* kQueueSeen = "slo.qt";   // when requests were last seen waiting
constexpr const char* kSeen = "slo.seen";      // the last tick with valid demand
constexpr const char* kWatched = "slo.since";  // since when demand was seen with no gap
constexpr const char* kBlind = "slo.blind";    // 1: that watch began after a gap or a reset
// Ticks of missing demand tolerated before the history is taken to have a gap.
constexpr double kGapPeriods = 2.5;

// The largest valid value over instances (a p99 per replica, or one for the service).
std::optional<double> Largest(const SignalSnapshot& s) {
  if (!s.ok() || s.instances.empty()) return std::nullopt;
  double v = s.instances.front().value;
  for (const auto& i : s.instances) v = std::max(v, i.value);
  return v;
}

}  // namespace

struct SloPolicy::Inputs {
  const SignalSnapshot* demand = nullptr;
  std::optional<double> ttft, latency;
  size_t latency_sources = 1;         // instances the latency quantile is the largest of
  std::optional<double> utilization;  // mean KV cache in use per replica, 0-1
  std::optional<double> busy;         // mean GPU busy share, 0-1
  double queue = 0;
  std::string bad;  // why this tick's input is not to be trusted; empty when it is
  // Why the window's SLO is not known (a quantile stale, failed to fetch, or from some replicas
  // only: the one left out may be the one that broke): nothing is learned from it.
  std::string unseen;
};

SloPolicy::SloPolicy(SloConfig cfg) : cfg_(std::move(cfg)) {}

std::vector<std::string> SloPolicy::OptionalSignals() const {
  return {std::string(signals::kQueueLen), std::string(signals::kTtftP99S),
          std::string(signals::kLatencyP99S), std::string(signals::kKvCacheUsage),
          std::string(signals::kGpuUtil)};
}

int SloPolicy::NeedFor(double demand, double capacity) const {
  if (!(capacity > 0)) return 0;
  return ReplicaCountCeil(demand / capacity);
}

SloPolicy::Inputs SloPolicy::Read(const PolicyInput& in) const {
  Inputs x;
  x.demand = &in.signals.Get(cfg_.signal);
  auto invalid = [&x](std::string_view name, const SignalSnapshot& s) {
    if (s.status != SignalStatus::kInvalid) return;
    StrAppend(x.bad, x.bad.empty() ? "" : "; ", name, " is invalid (", s.detail, ")");
  };
  invalid(cfg_.signal, *x.demand);
  const SignalSnapshot& ttft = in.signals.Get(signals::kTtftP99S);
  const SignalSnapshot& latency = in.signals.Get(signals::kLatencyP99S);
  const SignalSnapshot& queue = in.signals.Get(signals::kQueueLen);
  invalid(signals::kTtftP99S, ttft);
  invalid(signals::kLatencyP99S, latency);
  invalid(signals::kQueueLen, queue);
  auto unseen = [&x](std::string_view name, const SignalSnapshot& s) {
    if (s.status != SignalStatus::kStale && s.status != SignalStatus::kFetchFailed &&
        s.status != SignalStatus::kPartial) {
      return;
    }
    StrAppend(x.unseen, x.unseen.empty() ? "" : "; ", name, " is ", SignalStatusName(s.status),
              " (", s.detail, ")");
  };
  unseen(signals::kTtftP99S, ttft);
  unseen(signals::kLatencyP99S, latency);
  x.ttft = Largest(ttft);
  x.latency = Largest(latency);
  if (latency.ok()) x.latency_sources = std::max<size_t>(1, latency.instances.size());
  if (queue.ok()) x.queue = queue.sum;
  const SignalSnapshot& kv = in.signals.Get(signals::kKvCacheUsage);
  invalid(signals::kKvCacheUsage, kv);
  if (kv.ok()) x.utilization = kv.mean;
  const SignalSnapshot& gpu = in.signals.Get(signals::kGpuUtil);
  invalid(signals::kGpuUtil, gpu);
  if (gpu.ok()) x.busy = gpu.mean / 100;

  // The first token comes before the last: a TTFT quantile above the latency one is nonsense.
  if (x.ttft && x.latency && *x.ttft > *x.latency * (1 + 1e-9)) {
    StrAppend(x.bad, x.bad.empty() ? "" : "; ", "quantiles out of order (ttft_p99_s ", Num(*x.ttft),
              " > latency_p99_s ", Num(*x.latency), ")");
  }
  return x;
}

Recommendation SloPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  const double now_s = SinceEpochSeconds(in.now);
  Recommendation r;
  r.facts.reserve(22);
  // Time before the state's own: a new monotonic epoch. Nothing learned can be placed on the new
  // time line (seasons, windows), so start over.
  if (now_s < state.Get(kClock, now_s)) {
    state.values.clear();
    state.Set(kBlind, 1);
    r.facts.push_back({"state_reset", 1});
  }
  state.Set(kClock, now_s);
  const Inputs x = Read(in);
  serving::LeadLearner lead_learner(cfg_.cold_start_s, state, "slo.");
  const serving::LeadLearner::Counts counts{in.current, in.ready, in.asleep, in.asleep_ready};
  const double lead_s = lead_learner.Observe(counts, now_s) + cfg_.control_period_s;
  if (cfg_.warm.on) {
    serving::LeadLearner(cfg_.warm.wake_s, state, "slo.", serving::LeadLearner::Kind::kWake)
        .Observe(counts, now_s);
  }
  serving::CapacityLearner learner(cfg_.capacity, state, "slo.cap.");

  // A custom demand signal may take any value; a negative demand is a counter that went
  // backwards (or a broken query), not "no demand".
  const bool negative = x.demand->ok() && !(x.demand->sum >= 0 && std::isfinite(x.demand->sum));
  if (!x.demand->ok() || negative) {
    const serving::CapacityState cap = learner.Hold(
        negative ? StrCat(cfg_.signal, " is negative or not finite (", Num(x.demand->sum), ")")
                 : StrCat(cfg_.signal, " is ", SignalStatusName(x.demand->status), " (",
                          x.demand->detail, ")"));
    r.desired = in.current;
    r.rule = x.bad.empty() && !negative ? "missing_data" : "bad_input";
    r.reason = cap.reason + ": holding, never scaling down on missing or invalid demand";
    r.facts.push_back({"capacity", cap.estimate});
    return r;
  }
  const double demand = x.demand->sum;
  // The peaks a scale-down is weighed against are only known over the time demand was watched:
  // after a reset or a gap in the data, hold until a break-even's worth is seen again. (A first
  // start has its conservative first estimate: the load it finds, over the replicas ready.)
  const bool seen_before = state.FindVec(kSeen) != nullptr;
  if (now_s - state.Get(kSeen, -1e18) > kGapPeriods * cfg_.control_period_s) {
    state.Set(kWatched, now_s);
    if (seen_before) state.Set(kBlind, 1);
  }
  state.Set(kSeen, now_s);
  const double watched_s = now_s - state.Get(kWatched, now_s);
  const bool blind = state.Get(kBlind, 0) > 0;
  serving::DemandForecast forecast(cfg_.forecast, state, "slo.d.");
  const double absorbed = forecast.Observe(demand, now_s);
  // Queue history: the quantiles of a window still carry requests that waited in a backlog
  // for up to a latency limit after it clears.
  const double prev_queue = state.Get(kQueue, 0);
  if (x.queue > 0) state.Set(kQueueSeen, now_s);
  state.Set(kQueue, x.queue);
  serving::CapacityState cap;
  if (!x.bad.empty()) {
    cap = learner.Hold(x.bad);
  } else if (!x.unseen.empty()) {
    cap = learner.Hold(x.unseen + ": the window's SLO is not known");
  } else if (in.ready <= 0) {
    cap = learner.Hold("no replica is ready to measure");
  } else {
    serving::CapacitySample s;
    s.load = absorbed / in.ready;
    s.ttft_p99_s = x.ttft;
    s.latency_p99_s = x.latency;
    s.utilization = x.utilization;
    s.busy = x.busy;
    // About how many requests the largest latency quantile spans: one instance's share of the
    // demand (one per replica when each server is scraped, all of it when a query aggregates)
    // over one control period, the usual window (the source's own is not known here).
    s.requests = demand / static_cast<double>(x.latency_sources) * cfg_.control_period_s;
    s.clean = x.queue <= 0 && now_s - state.Get(kQueueSeen, -1e18) > cfg_.latency_s;
    // Saturated: requests waited at the last tick too, and the queue is not shrinking (one
    // tick of waiting is a blip: a large prompt at the head of the queue, a burst's edge).
    s.saturated = x.queue > 0 && prev_queue > 0 && x.queue >= prev_queue;
    cap = learner.Observe(s, now_s);
  }
  const double f = forecast.Forecast(lead_s, now_s);
  serving::Headroom headroom(cfg_.headroom, state, "slo.h.");
  const double floor = std::max(cap.estimate, forecast.mean());
  const double h = headroom.Observe(absorbed, f, lead_s, floor, now_s);

  double ratio = 0;
  if (x.ttft) ratio = std::max(ratio, *x.ttft / cfg_.ttft_s);
  if (x.latency) ratio = std::max(ratio, *x.latency / cfg_.latency_s);
  const bool breach = ratio > 1 && x.queue > 0;
  const double c = cap.estimate;
  const double break_even_s = lead_s + cfg_.latency_s;
  // A peak that came back three times over four break-even times will come back again:
  // removing its replicas in between would pay a cold start each time.
  const double peak =
      std::max(forecast.Peak(break_even_s, now_s), forecast.Recurring(4 * break_even_s, 3, now_s));
  const int up = NeedFor(f + h, c);
  const int hold = NeedFor(peak + headroom.For(peak, floor), c);
  const int drain = breach ? NeedFor(demand + x.queue / cfg_.control_period_s, c) : 0;
  r.facts = {{"demand", demand},
             {"demand_absorbed", absorbed},
             {"forecast", f},
             {"headroom", h},
             {"headroom_score", headroom.Score()},
             {"headroom_scored", static_cast<double>(headroom.scored())},
             {"lead_s", lead_s},
             {"lead_measurements", static_cast<double>(lead_learner.measurements())},
             {"capacity", c},
             {"capacity_target", cap.target},
             {"held_at", cap.held_at},
             {"broke_at", cap.broke_at},
             {"capacity_ceiling", cap.ceiling},
             {"capacity_lift", cap.lift},
             {"utilization", x.utilization.value_or(-1)},
             {"slo_ratio", ratio},
             {"queue", x.queue},
             {"need_up", up},
             {"need_hold", hold},
             {"need_drain", drain},
             {"break_even_s", break_even_s},
             {"seasonal", forecast.seasonal() ? 1 : 0},
             {"watched_s", watched_s}};
  r.valid = true;
  if (c <= 0) {
    // Nothing learned yet: the size it found is the only evidence; grow it on a breach.
    const int grow = std::max(1, static_cast<int>(std::ceil(in.current * cfg_.breach_growth)));
    // At zero nothing reports quantiles, so no breach can show: demand itself starts one.
    const int least = cfg_.scale_to_zero && demand <= 0 ? 0 : 1;
    r.desired = breach ? in.current + grow : std::max(in.current, least);
    r.rule = "learning";
    r.reason = cap.reason + (breach ? StrCat("; the SLO is broken (ratio ", Num(ratio),
                                             ") with requests waiting: +", grow)
                                    : std::string("; holding the size it found"));
    return r;
  }
  int desired = std::max({up, hold, drain});
  r.rule = drain >= std::max(up, hold) && breach ? "slo_breach"
           : hold > up                           ? "hold_down"
                                                 : "forecast";
  r.reason = StrCat("forecast ", Num(f), "/s over the next ", Num(lead_s), " s + headroom ", Num(h),
                    "/s at ", Num(c), "/s per replica needs ", up, "; the peak of the last ",
                    Num(break_even_s), " s (cold start + drain) needs ", hold);
  if (breach) StrAppend(r.reason, "; the SLO is broken with ", Num(x.queue), " waiting: ", drain);
  StrAppend(r.reason, "; ", cap.reason);
  if (!x.bad.empty()) {
    r.rule = "bad_input";
    if (desired < in.current) {
      desired = in.current;
      r.reason += "; not scaling down on invalid input";
    }
  }
  if (blind && watched_s >= break_even_s) state.Set(kBlind, 0);
  if (blind && desired < in.current && watched_s < break_even_s) {
    desired = in.current;
    r.rule = "hold_down";
    StrAppend(r.reason, "; demand watched for ", Num(watched_s), " s of the ", Num(break_even_s),
              " s a scale-down is weighed over (a start, a reset or a gap in the data): holding");
  }
  desired = cfg_.scale_to_zero ? desired : std::max(desired, 1);
  const double insured = f + cfg_.warm.reserve * h;
  r.desired = cfg_.warm.on ? SplitWarm(in, state, c, floor, desired, drain, insured, r) : desired;
  if (!x.bad.empty() && r.desired < in.current) r.desired = in.current;
  return r;
}

int SloPolicy::SplitWarm(const PolicyInput& in, PersistentState& state, double c, double floor,
                         int total, int drain, double insured, Recommendation& r) const {
  total = std::max(total, NeedFor(insured, c));
  const double now_s = SinceEpochSeconds(in.now);
  const serving::LeadLearner wake(cfg_.warm.wake_s, state, "slo.",
                                  serving::LeadLearner::Kind::kWake);
  const double lead_s = wake.estimate() + cfg_.control_period_s;
  serving::DemandForecast forecast(cfg_.forecast, state, "slo.d.");
  const double f = forecast.Forecast(lead_s, now_s);
  serving::Headroom headroom(cfg_.headroom, state, "slo.hw.");
  const double h =
      headroom.Observe(forecast.Peak(cfg_.control_period_s, now_s), f, lead_s, floor, now_s);
  // Putting a replica to sleep costs a wake, not a cold start: its break-even is wake + drain.
  const double peak = forecast.Peak(lead_s + cfg_.latency_s, now_s);
  int awake = std::max({NeedFor(f + h, c), NeedFor(peak + headroom.For(peak, floor), c), drain});
  awake = std::clamp(awake, cfg_.scale_to_zero ? 0 : 1, std::max(total, 1));
  r.asleep = std::clamp(total - awake, 0,
                        std::max(0, std::min(cfg_.warm.max_asleep, cfg_.max_replicas - awake)));
  r.facts.push_back({"warm_lead_s", lead_s});
  r.facts.push_back({"wake_measurements", static_cast<double>(wake.measurements())});
  r.facts.push_back({"awake_need", awake});
  r.facts.push_back({"asleep", r.asleep});
  StrAppend(r.reason, "; warm tier: ", awake, " awake (wake lead ", Num(lead_s), " s), ", r.asleep,
            " asleep");
  return awake;
}

}  // namespace aiscale::decide
