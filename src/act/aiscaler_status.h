// AiScalerStatus: the `.status` aiscale writes on an AIScaler, shaped as HPA's (autoscaling/v2
// HorizontalPodAutoscalerStatus: observedGeneration, currentReplicas, desiredReplicas,
// lastScaleTime, current metrics, conditions AbleToScale, ScalingActive and ScalingLimited with
// HPA's reasons where one applies), plus a Paused condition as KEDA's ScaledObject has, and the
// `reference` and `targets` texts that `kubectl get aiscalers` shows.
//
// Built from the tick's Decision (or from why there is none: an invalid spec, a name clash) by
// a pure function. Only changes are written: Core() (replicas, generation, conditions) is
// written at once, Metrics() (signal values, which move every tick) at most every so often;
// a condition's lastTransitionTime is kept while its status stays.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/decision.h"
#include "core/time.h"

namespace aiscale::act {

struct StatusCondition {
  std::string type;    // AbleToScale, ScalingActive, ScalingLimited, Paused
  std::string status;  // "True", "False", "Unknown"
  std::string reason;  // CamelCase, HPA's where one applies (ValidMetricFound, TooManyReplicas)
  std::string message;
  std::string last_transition_time;  // RFC 3339
  bool operator==(const StatusCondition& o) const {
    return type == o.type && status == o.status && reason == o.reason && message == o.message;
  }
};

struct StatusMetric {
  std::string name;
  std::string status;  // ok, missing, stale, invalid, fetch_failed, ...
  double value = 0;    // mean over instances when ok
  int instances = 0;
  bool operator==(const StatusMetric& o) const {
    return name == o.name && status == o.status && value == o.value && instances == o.instances;
  }
};

struct AiScalerStatus {
  int64_t observed_generation = 0;
  std::string reference;  // "Deployment/llm"
  std::optional<int> current_replicas, desired_replicas;
  std::string last_scale_time;  // RFC 3339; "" when never scaled
  std::string targets;          // "12/16, 0.6/0.75": each signal's current/target
  std::vector<StatusMetric> metrics;
  std::vector<StatusCondition> conditions;

  // What is written as soon as it changes.
  bool SameCore(const AiScalerStatus& o) const;
  bool SameMetrics(const AiScalerStatus& o) const {
    return targets == o.targets && metrics == o.metrics;
  }
  nlohmann::json ToJson() const;
  // The status in an object's .status (what was written before, e.g. by a previous process);
  // missing or mistyped fields are left empty.
  static AiScalerStatus FromJson(const nlohmann::json& status);
  const StatusCondition* Condition(const std::string& type) const;
};

// Why a status is what it is.
struct StatusInput {
  int64_t generation = 0;
  std::string reference;
  std::string invalid;                         // the spec's problems ("spec.x: ..."): not acted on
  std::string conflict;                        // why another workload holds this name: not acted on
  const Decision* decision = nullptr;          // the last tick's, when acted on
  std::string hold;                            // PauseSpec::Summary() ("" when none)
  std::string hold_source;                     // e.g. "annotation aiscale.dev/paused"
  std::string hold_error;                      // a hold annotation that cannot be read
  std::map<std::string, std::string> targets;  // signal -> target text
  std::string last_scale_time;
};

// `previous` (may be null) supplies lastTransitionTime for conditions whose status held;
// `now` stamps the others.
AiScalerStatus BuildStatus(const StatusInput& in, const AiScalerStatus* previous,
                           const std::string& now);

// metav1.Time: "2026-12-01T10:00:00Z" (seconds; "" for the epoch).
std::string FormatKubeTime(WallTime t);

}  // namespace aiscale::act
