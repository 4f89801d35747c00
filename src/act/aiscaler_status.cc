#include "act/aiscaler_status.h"

#include <cstdio>
#include <ctime>

namespace aiscale::act {
namespace {

using nlohmann::json;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

StatusCondition Cond(const char* type, bool status, const std::string& reason,
                     const std::string& message) {
  return {type, status ? "True" : "False", reason, message, ""};
}

StatusCondition Unknown(const char* type, const std::string& reason, const std::string& message) {
  return {type, "Unknown", reason, message, ""};
}

StatusCondition AbleToScale(const StatusInput& in) {
  if (!in.invalid.empty()) return Cond("AbleToScale", false, "InvalidSpec", "not acted on");
  if (!in.conflict.empty()) return Cond("AbleToScale", false, "NameConflict", "not acted on");
  const Decision& d = *in.decision;
  if (d.action == Action::kFailed && d.recommendation.rule == "observe_failed") {
    return Cond("AbleToScale", false, "FailedGetScale",
                "the controller was unable to get the target's current scale: " + d.action_detail);
  }
  if (d.action == Action::kFailed) {
    return Cond("AbleToScale", false, "FailedUpdateScale",
                "the controller was unable to update the target scale: " + d.action_detail);
  }
  if (d.action == Action::kScaled) {
    return Cond(
        "AbleToScale", true, "SucceededRescale",
        "the controller was able to update the target scale to " + std::to_string(d.constrained));
  }
  if (d.vetoed) return Cond("AbleToScale", true, "ScaleDownVetoed", d.stabilize_reason);
  if (d.recommendation.valid && d.stabilized != d.recommendation.desired) {
    // HPA's own words: the stabilizer's reason names the raw recommendation, which moves with
    // every sample and would make each tick's status a change worth writing.
    if (d.recommendation.desired < d.stabilized) {
      return Cond("AbleToScale", true, "ScaleDownStabilized",
                  "recent recommendations were higher than current one, applying the highest "
                  "recent recommendation");
    }
    return Cond("AbleToScale", true, "ScaleUpStabilized",
                "recent recommendations were lower than current one, applying the lowest recent "
                "recommendation");
  }
  return Cond("AbleToScale", true, "ReadyForNewScale", "recommended size matches current size");
}

StatusCondition ScalingActive(const StatusInput& in) {
  if (!in.invalid.empty()) return Cond("ScalingActive", false, "InvalidSpec", in.invalid);
  if (!in.conflict.empty()) return Cond("ScalingActive", false, "NameConflict", in.conflict);
  const Decision& d = *in.decision;
  if (d.recommendation.rule == "observe_failed") {
    return Unknown("ScalingActive", "FailedGetScale", "the target's scale is unknown");
  }
  if (!d.recommendation.valid) {
    return Cond("ScalingActive", false, "FailedGetMetrics",
                "the policy " + d.policy +
                    " could not compute a replica count: " + d.recommendation.reason);
  }
  // Not the rule that fired: it moves with every sample near a threshold (within tolerance,
  // direction flip), and each move would be a status write; the Decisions carry it.
  return Cond("ScalingActive", true, "ValidMetricFound",
              "the policy " + d.policy + " computed a replica count");
}

StatusCondition ScalingLimited(const StatusInput& in) {
  if (!in.invalid.empty()) return Unknown("ScalingLimited", "InvalidSpec", "not acted on");
  if (!in.conflict.empty()) return Unknown("ScalingLimited", "NameConflict", "not acted on");
  const Decision& d = *in.decision;
  if (!d.recommendation.valid) {
    return Unknown("ScalingLimited", "NoRecommendation", "no replica count to limit");
  }
  // The phrases of decide::Constraints (tests/act/aiscaler_status_test.cc holds them to it).
  const std::string& r = d.constrain_reason;
  if (r.find("capped at max_replicas") != std::string::npos) {
    return Cond("ScalingLimited", true, "TooManyReplicas",
                "the desired replica count is more than the maximum replica count");
  }
  if (r.find("raised to min_replicas") != std::string::npos) {
    return Cond("ScalingLimited", true, "TooFewReplicas",
                "the desired replica count is less than the minimum replica count");
  }
  if (r.find("cluster can host") != std::string::npos) {
    return Cond("ScalingLimited", true, "InsufficientCapacity",
                "the desired replica count is more than the cluster can place now");
  }
  return Cond("ScalingLimited", false, "DesiredWithinRange",
              "the desired count is within the acceptable range");
}

StatusCondition Paused(const StatusInput& in) {
  if (!in.hold_error.empty()) {
    return Cond("Paused", true, "InvalidAnnotation", in.hold_error + "; holding the current size");
  }
  if (in.hold.empty()) {
    return Cond("Paused", false, "NotPaused", "no aiscale.dev/paused* annotation");
  }
  std::string reason = "ScalingPaused";
  if (in.hold.rfind("pinned", 0) == 0) reason = "ReplicasPinned";
  if (in.hold == "scale-down paused") reason = "ScaleDownPaused";
  if (in.hold == "scale-up paused") reason = "ScaleUpPaused";
  return Cond("Paused", true, reason, in.hold + " by " + in.hold_source);
}

void Metrics(const StatusInput& in, AiScalerStatus& s) {
  if (!in.decision) return;
  for (const SignalInput& i : in.decision->inputs) {
    const bool ok = i.status == SignalStatus::kOk;
    s.metrics.push_back(
        {i.name, std::string(SignalStatusName(i.status)), ok ? i.value : 0, i.instances});
    std::string t = ok ? Num(i.value) : "<unknown>";
    const auto target = in.targets.find(i.name);
    if (target != in.targets.end() && !target->second.empty()) t += "/" + target->second;
    s.targets += (s.targets.empty() ? "" : ", ") + t;
  }
}

}  // namespace

std::string FormatKubeTime(WallTime t) {
  const auto since = t.time_since_epoch();
  if (since.count() <= 0) return "";
  const std::time_t tt =
      static_cast<std::time_t>(std::chrono::floor<std::chrono::seconds>(since).count());
  std::tm tm{};
  if (!gmtime_r(&tt, &tm)) return "";
  char buf[32];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf, n);
}

bool AiScalerStatus::SameCore(const AiScalerStatus& o) const {
  return observed_generation == o.observed_generation && reference == o.reference &&
         current_replicas == o.current_replicas && desired_replicas == o.desired_replicas &&
         last_scale_time == o.last_scale_time && conditions == o.conditions;
}

const StatusCondition* AiScalerStatus::Condition(const std::string& type) const {
  for (const StatusCondition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

AiScalerStatus BuildStatus(const StatusInput& in, const AiScalerStatus* previous,
                           const std::string& now) {
  AiScalerStatus s;
  s.observed_generation = in.generation;
  s.reference = in.reference;
  s.last_scale_time = in.last_scale_time;
  const bool acted = in.invalid.empty() && in.conflict.empty() && in.decision;
  if (acted) {
    const Decision& d = *in.decision;
    if (d.recommendation.rule != "observe_failed") {
      s.current_replicas = d.action == Action::kScaled ? d.constrained : d.current;
      s.desired_replicas = d.constrained;
    }
    Metrics(in, s);
  }
  if (!acted && in.invalid.empty() && in.conflict.empty()) return s;  // no tick yet
  s.conditions = {AbleToScale(in), ScalingActive(in), ScalingLimited(in), Paused(in)};
  for (StatusCondition& c : s.conditions) {
    const StatusCondition* old = previous ? previous->Condition(c.type) : nullptr;
    c.last_transition_time = old && old->status == c.status && !old->last_transition_time.empty()
                                 ? old->last_transition_time
                                 : now;
  }
  return s;
}

json AiScalerStatus::ToJson() const {
  json j = {{"observedGeneration", observed_generation}};
  if (!reference.empty()) j["reference"] = reference;
  if (current_replicas) j["currentReplicas"] = *current_replicas;
  if (desired_replicas) j["desiredReplicas"] = *desired_replicas;
  if (!last_scale_time.empty()) j["lastScaleTime"] = last_scale_time;
  if (!targets.empty()) j["targets"] = targets;
  json m = json::array();
  for (const StatusMetric& x : metrics) {
    m.push_back(
        {{"name", x.name}, {"status", x.status}, {"value", x.value}, {"instances", x.instances}});
  }
  if (!m.empty()) j["currentMetrics"] = m;
  json c = json::array();
  for (const StatusCondition& x : conditions) {
    c.push_back({{"type", x.type},
                 {"status", x.status},
                 {"reason", x.reason},
                 {"message", x.message},
                 {"lastTransitionTime", x.last_transition_time}});
  }
  if (!c.empty()) j["conditions"] = c;
  return j;
}

AiScalerStatus AiScalerStatus::FromJson(const json& status) {
  AiScalerStatus s;
  if (!status.is_object()) return s;
  const auto str = [](const json& o, const char* k) {
    const auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (status.contains("observedGeneration") && status["observedGeneration"].is_number_integer()) {
    s.observed_generation = status["observedGeneration"].get<int64_t>();
  }
  s.reference = str(status, "reference");
  for (const auto& [field, out] :
       {std::pair<const char*, std::optional<int>*>{"currentReplicas", &s.current_replicas},
        {"desiredReplicas", &s.desired_replicas}}) {
    if (status.contains(field) && status[field].is_number_integer()) {
      *out = status[field].get<int>();
    }
  }
  s.last_scale_time = str(status, "lastScaleTime");
  s.targets = str(status, "targets");
  if (status.contains("conditions") && status["conditions"].is_array()) {
    for (const json& c : status["conditions"]) {
      if (!c.is_object()) continue;
      s.conditions.push_back({str(c, "type"), str(c, "status"), str(c, "reason"), str(c, "message"),
                              str(c, "lastTransitionTime")});
    }
  }
  return s;
}

}  // namespace aiscale::act
