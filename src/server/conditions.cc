#include "server/conditions.h"

#include <limits>

namespace aiscale::server {
namespace {

// How decide::PausedConstraints names an annotation's hold in constrain_reason.
constexpr const char* kByAnnotation = "by annotation aiscale.dev/";

Condition AbleToScale(const WorkloadView& w) {
  const Decision& d = *w.last;
  if (d.recommendation.rule == "observe_failed") {
    return {"AbleToScale", false, "FailedGetScale", d.action_detail};
  }
  if (d.action == Action::kFailed)
    return {"AbleToScale", false, "FailedUpdateScale", d.action_detail};
  if (d.action == Action::kScaled) {
    return {"AbleToScale", true, "SucceededRescale", "scaled " + d.action_detail};
  }
  if (!d.stabilize_reason.empty() && d.stabilized != d.recommendation.desired) {
    return {"AbleToScale", true, "ScaleStabilized", d.stabilize_reason};
  }
  return {"AbleToScale", true, "ReadyForNewScale", "recommended size can be applied"};
}

Condition ScalingActive(const WorkloadView& w) {
  const Decision& d = *w.last;
  if (!d.recommendation.valid) {
    return {"ScalingActive", false, "InvalidRecommendation",
            "[" + d.recommendation.rule + "] " + d.recommendation.reason};
  }
  return {"ScalingActive", true, "ValidRecommendation",
          "the policy computed a size with rule " + d.recommendation.rule};
}

Condition ScalingLimited(const WorkloadView& w) {
  const Decision& d = *w.last;
  const std::string& why = d.constrain_reason;
  const auto has = [&](const char* part) { return why.find(part) != std::string::npos; };
  std::string reason;
  if (has("cluster can host")) reason = "CapacityLimited";
  if (has("rounded")) reason = "Granularity";
  if (has("min_replicas")) reason = "TooFewReplicas";
  if (has("max_replicas")) reason = "TooManyReplicas";
  // An override's note is always there while it is in force; it limits only when it held the
  // size away from what the pipeline asked for.
  if (has("(the pipeline asked for")) {
    reason = w.steering.mode == SteerMode::kPinned ? "Pinned" : "Paused";
  }
  // An AIScaler's pause annotations (decide/pause.h) say "(would be N)" when they held.
  if (has(kByAnnotation) && has("(would be")) reason = has("pinned at") ? "Pinned" : "Paused";
  if (reason.empty()) {
    return {"ScalingLimited", false, "DesiredWithinRange",
            why.empty() ? "the desired size is within range" : why};
  }
  return {"ScalingLimited", true, reason, why};
}

Condition SignalsFresh(const WorkloadView& w) {
  std::string bad;
  for (const SignalView& s : w.signals) {
    if (s.status == SignalStatus::kOk) continue;
    bad += (bad.empty() ? "" : "; ") + s.name + " " + std::string(SignalStatusName(s.status));
    if (!s.detail.empty()) bad += " (" + s.detail + ")";
  }
  if (bad.empty())
    return {"SignalsFresh", true, "AllSignalsFresh", "every signal has current data"};
  return {"SignalsFresh", false, "SignalMissingOrStale", bad + "; no scale-down on missing data"};
}

}  // namespace

std::vector<Condition> ConditionsOf(const WorkloadView& w) {
  std::vector<Condition> out;
  if (!w.last) {
    out.push_back({"AbleToScale", false, "NoDecisionYet", "no tick has decided yet"});
    return out;
  }
  out = {AbleToScale(w), ScalingActive(w), ScalingLimited(w), SignalsFresh(w)};
  if (w.steering.mode != SteerMode::kNone) {
    out.push_back({"Paused", true,
                   w.steering.mode == SteerMode::kPinned ? "PinnedByOperator" : "PausedByOperator",
                   w.steering.Describe()});
  } else if (const std::string& why = w.last->constrain_reason;
             why.find(kByAnnotation) != std::string::npos) {
    // The hold is one clause of the reason ("...; paused by annotation aiscale.dev/paused").
    const size_t from = why.rfind("; ", why.find(kByAnnotation));
    out.push_back({"Paused", true, "PausedByAnnotation",
                   from == std::string::npos ? why : why.substr(from + 2)});
  }
  return out;
}

double SignalTarget(const WorkloadView& w, std::string_view signal) {
  if (!w.last) return std::numeric_limits<double>::quiet_NaN();
  std::string key(signal);
  key += ".target";
  const auto& facts = w.last->recommendation.facts;
  for (const auto& [k, v] : facts) {
    if (k == key) return v;
  }
  if (w.signals.size() == 1) {
    for (const auto& [k, v] : facts) {
      if (k == "target") return v;
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace aiscale::server
