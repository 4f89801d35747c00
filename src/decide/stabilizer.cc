#include "decide/stabilizer.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <string_view>

#include "core/numeric.h"
#include "decide/text.h"

namespace aiscale::decide {
namespace {

// Kubernetes bounds the lists by reusing stale slots; the cap is a guard against a clock or a
// config that would let them grow past any sensible size (one tick per second over the
// longest window is 3600 entries).
constexpr size_t kMaxEntries = 8192;

// Looked up as string_view (PersistentState's comparator is transparent): no string is built.
constexpr std::string_view kRecommendations = "hpa_behavior.recommendations";
constexpr std::string_view kScaleUpEvents = "hpa_behavior.scale_up_events";
constexpr std::string_view kScaleDownEvents = "hpa_behavior.scale_down_events";

bool After(TimePoint a, TimePoint b) { return a > b; }
bool Before(TimePoint a, TimePoint b) { return a < b; }
TimePoint Cutoff(TimePoint now, int seconds) { return now - std::chrono::seconds(seconds); }

// Time is stored as whole seconds plus nanoseconds so that doubles hold it exactly.
std::vector<TimedValue> LoadList(const PersistentState& s, std::string_view key) {
  std::vector<TimedValue> out;
  const std::vector<double>* v = s.FindVec(key);
  if (!v) return out;
  out.reserve(v->size() / 4);
  for (size_t i = 0; i + 3 < v->size(); i += 4) {
    // Restored state is data: saturate rather than overflow on a corrupt or foreign value.
    const int64_t ns = SaturatingAdd(SaturatingMul(SaturatingToInt64((*v)[i]), 1000000000),
                                     SaturatingToInt64((*v)[i + 1]));
    out.push_back(
        {TimePoint(Duration(ns)), ClampToInt((*v)[i + 2], 0, kMaxReplicaCount), (*v)[i + 3] != 0});
  }
  return out;
}

void SaveList(PersistentState& s, std::string_view key, const std::vector<TimedValue>& list) {
  std::vector<double>& v = s.Vec(key);
  v.clear();
  for (const TimedValue& e : list) {
    const int64_t ns = e.at.time_since_epoch().count();
    int64_t sec = ns / 1000000000;
    int64_t rem = ns % 1000000000;
    if (rem < 0) {
      rem += 1000000000;
      --sec;
    }
    v.insert(v.end(), {static_cast<double>(sec), static_cast<double>(rem),
                       static_cast<double>(e.value), e.outdated ? 1.0 : 0.0});
  }
}

void AppendCapped(std::vector<TimedValue>& list, TimedValue e) {
  list.push_back(e);
  if (list.size() > kMaxEntries) {
    auto oldest = std::min_element(list.begin(), list.end(),
                                   [](const auto& a, const auto& b) { return a.at < b.at; });
    list.erase(oldest);
  }
}

// getReplicasChangePerPeriod
int ChangeInPeriod(int period_seconds, const std::vector<TimedValue>& events, TimePoint now) {
  const TimePoint cutoff = Cutoff(now, period_seconds);
  int replicas = 0;
  for (const TimedValue& e : events) {
    if (After(e.at, cutoff)) replicas += e.value;
  }
  return replicas;
}

int ToInt32(double v) {
  if (!(v < static_cast<double>(INT_MAX))) return INT_MAX;
  if (v < static_cast<double>(INT_MIN)) return INT_MIN;
  return static_cast<int>(v);  // truncates toward zero, as Go's int32() does
}

// calculateScaleUpLimitWithScalingRules
int ScaleUpLimit(int current, const BehaviorHistory& h, const HpaScalingRules& r, TimePoint now) {
  if (r.select_policy == SelectPolicy::kDisabled) return current;
  const bool min_change = r.select_policy == SelectPolicy::kMin;
  int result = min_change ? INT_MAX : INT_MIN;
  for (const HpaScalingPolicy& p : r.policies) {
    const int added = ChangeInPeriod(p.period_seconds, h.scale_up_events, now);
    const int deleted = ChangeInPeriod(p.period_seconds, h.scale_down_events, now);
    const int start = current - added + deleted;
    const int proposed = p.type == HpaScalingPolicy::Type::kPods
                             ? start + p.value
                             : ToInt32(std::ceil(static_cast<double>(start) *
                                                 (1 + static_cast<double>(p.value) / 100)));
    result = min_change ? std::min(result, proposed) : std::max(result, proposed);
  }
  return result;
}

// calculateScaleDownLimitWithBehaviors
int ScaleDownLimit(int current, const BehaviorHistory& h, const HpaScalingRules& r, TimePoint now) {
  if (r.select_policy == SelectPolicy::kDisabled) return current;
  const bool min_change = r.select_policy == SelectPolicy::kMin;
  int result = min_change ? INT_MIN : INT_MAX;
  for (const HpaScalingPolicy& p : r.policies) {
    const int added = ChangeInPeriod(p.period_seconds, h.scale_up_events, now);
    const int deleted = ChangeInPeriod(p.period_seconds, h.scale_down_events, now);
    const int start = current - added + deleted;
    const int proposed =
        p.type == HpaScalingPolicy::Type::kPods
            ? start - p.value
            : ToInt32(static_cast<double>(start) * (1 - static_cast<double>(p.value) / 100));
    result = min_change ? std::max(result, proposed) : std::min(result, proposed);
  }
  return result;
}

int LongestPeriod(const HpaScalingRules& r) {
  int longest = 0;
  for (const HpaScalingPolicy& p : r.policies) longest = std::max(longest, p.period_seconds);
  return longest;
}

// markScaleEventsOutdated + the reuse of the last outdated slot in storeScaleEvent.
void StoreEvent(std::vector<TimedValue>& events, int longest_period, int change, TimePoint now) {
  const TimePoint cutoff = Cutoff(now, longest_period);
  std::optional<size_t> reuse;
  for (size_t i = 0; i < events.size(); ++i) {
    if (Before(events[i].at, cutoff)) events[i].outdated = true;
    if (events[i].outdated) reuse = i;
  }
  const TimedValue e{now, change, false};
  if (reuse) {
    events[*reuse] = e;
  } else {
    AppendCapped(events, e);
  }
}

}  // namespace

BehaviorHistory BehaviorHistory::Load(const PersistentState& state) {
  BehaviorHistory h;
  h.recommendations = LoadList(state, kRecommendations);
  h.scale_up_events = LoadList(state, kScaleUpEvents);
  h.scale_down_events = LoadList(state, kScaleDownEvents);
  return h;
}

void BehaviorHistory::Save(PersistentState& state) const {
  SaveList(state, kRecommendations, recommendations);
  SaveList(state, kScaleUpEvents, scale_up_events);
  SaveList(state, kScaleDownEvents, scale_down_events);
}

int StabilizeRecommendation(const HpaBehavior& b, BehaviorHistory& h, int current, int desired,
                            TimePoint now, std::string_view* reason) {
  const TimePoint up_cutoff = Cutoff(now, b.scale_up.stabilization_window_seconds);
  const TimePoint down_cutoff = Cutoff(now, b.scale_down.stabilization_window_seconds);
  int up = desired;
  int down = desired;
  std::optional<size_t> old_sample;
  for (size_t i = 0; i < h.recommendations.size(); ++i) {
    const TimedValue& r = h.recommendations[i];
    if (After(r.at, up_cutoff)) up = std::min(r.value, up);
    if (After(r.at, down_cutoff)) down = std::max(r.value, down);
    if (Before(r.at, up_cutoff) && Before(r.at, down_cutoff)) old_sample = i;
  }
  // Up: the lowest recent recommendation; down: the highest (never past current).
  int rec = current;
  if (rec < up) rec = up;
  if (rec > down) rec = down;
  const TimedValue entry{now, desired, false};
  if (old_sample) {
    h.recommendations[*old_sample] = entry;
  } else {
    AppendCapped(h.recommendations, entry);
  }
  if (reason) *reason = desired >= current ? "ScaleUpStabilized" : "ScaleDownStabilized";
  return rec;
}

int ConvertWithBehaviorRate(const HpaBehavior& b, const BehaviorHistory& h,
                            const NormalizeInput& in, TimePoint now, std::string_view* reason) {
  std::string_view why = "DesiredWithinRange";
  int out = in.desired;
  if (in.desired > in.current) {
    const int limit = std::max(ScaleUpLimit(in.current, h, b.scale_up, now), in.current);
    int max_allowed = in.max_replicas;
    std::string_view limiting = "TooManyReplicas";
    if (max_allowed > limit) {
      max_allowed = limit;
      limiting = "ScaleUpLimit";
    }
    if (in.desired > max_allowed) {
      out = max_allowed;
      why = limiting;
    }
  } else if (in.desired < in.current) {
    const int limit = std::min(ScaleDownLimit(in.current, h, b.scale_down, now), in.current);
    int min_allowed = in.min_replicas;
    std::string_view limiting = "TooFewReplicas";
    if (min_allowed < limit) {
      min_allowed = limit;
      limiting = "ScaleDownLimit";
    }
    if (in.desired < min_allowed) {
      out = min_allowed;
      why = limiting;
    }
  }
  if (reason) *reason = why;
  return out;
}

Normalized Normalize(const HpaBehavior& b, BehaviorHistory& h, const NormalizeInput& in,
                     TimePoint now) {
  Normalized n;
  n.stabilized = StabilizeRecommendation(b, h, in.current, in.desired, now, &n.stabilize_reason);
  if (n.stabilized == in.desired) n.stabilize_reason = "ReadyForNewScale";
  NormalizeInput rate = in;
  rate.desired = n.stabilized;
  n.replicas = ConvertWithBehaviorRate(b, h, rate, now, &n.limit_reason);
  return n;
}

void StoreScaleEvent(const HpaBehavior& b, BehaviorHistory& h, int from, int to, TimePoint now) {
  if (to > from) {
    StoreEvent(h.scale_up_events, LongestPeriod(b.scale_up), to - from, now);
  } else if (to < from) {
    StoreEvent(h.scale_down_events, LongestPeriod(b.scale_down), from - to, now);
  }
}

void BehaviorHistory::NotAfter(TimePoint now) {
  for (auto* list : {&recommendations, &scale_up_events, &scale_down_events}) {
    for (TimedValue& e : *list) e.at = std::min(e.at, now);
  }
}

StabilizeResult HpaBehaviorStabilizer::Stabilize(int recommended, int current, TimePoint now,
                                                 PersistentState& state) const {
  BehaviorHistory h = BehaviorHistory::Load(state);
  h.NotAfter(now);
  const Normalized n = Normalize(behavior_, h, {current, recommended, 0, INT_MAX}, now);
  h.Save(state);
  StabilizeResult out;
  out.desired = n.replicas;
  if (n.stabilized != recommended) {
    const bool up = recommended >= current;
    out.reason =
        StrCat(n.stabilize_reason, ": ", up ? "lowest" : "highest", " recommendation in the last ",
               up ? behavior_.scale_up.stabilization_window_seconds
                  : behavior_.scale_down.stabilization_window_seconds,
               " s is ", n.stabilized, " (raw ", recommended, ")");
  }
  if (n.replicas != n.stabilized) {
    if (!out.reason.empty()) out.reason += "; ";
    StrAppend(out.reason, n.limit_reason, ": rate policies allow ", n.replicas, " from ", current,
              " now");
  }
  return out;
}

void HpaBehaviorStabilizer::RecordScale(int from, int to, TimePoint now,
                                        PersistentState& state) const {
  BehaviorHistory h = BehaviorHistory::Load(state);
  h.NotAfter(now);
  StoreScaleEvent(behavior_, h, from, to, now);
  h.Save(state);
}

std::unique_ptr<Stabilizer> CreateStabilizer(const config::ConfigNode& behavior,
                                             bool hpa_defaults) {
  if (!behavior.IsDefined() && !hpa_defaults) return nullptr;
  return std::make_unique<HpaBehaviorStabilizer>(HpaBehavior::Parse(behavior));
}

}  // namespace aiscale::decide
