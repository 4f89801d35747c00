// Stabilizer implementations and their factory.
//
// HpaBehaviorStabilizer is the Kubernetes autoscaling/v2 `behavior`, exactly as horizontal.go
// applies it (stabilizeRecommendationWithBehaviors, then convertDesiredReplicasWithBehaviorRate):
// stabilization windows (0 s up, 300 s down by default), Pods/Percent policies per period,
// selectPolicy Max/Min/Disabled. Used by default for the `hpa` policy and for any workload
// with `behavior`. Its history (recommendations, scale-up and scale-down events) lives in the
// PersistentState the Controller keeps; it is bounded the way Kubernetes bounds it (an entry
// older than every window/period is reused before a new one is appended) plus a hard cap.
//
//   HpaBehavior b = HpaBehavior::Defaults();
//   BehaviorHistory h;
//   Normalized n = Normalize(b, h, {current, desired, min, max}, now);  // records desired
//   ... after scaling: StoreScaleEvent(b, h, current, n.replicas, now);
//
// Thread safety: stateless apart from the state passed in.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "core/result.h"

namespace aiscale::decide {

struct HpaScalingPolicy {
  enum class Type { kPods, kPercent };
  Type type = Type::kPods;
  int value = 0;           // > 0
  int period_seconds = 0;  // 1..1800
};

enum class SelectPolicy { kMax, kMin, kDisabled };

struct HpaScalingRules {
  int stabilization_window_seconds = 0;  // 0..3600
  SelectPolicy select_policy = SelectPolicy::kMax;
  std::vector<HpaScalingPolicy> policies;
};

struct HpaBehavior {
  HpaScalingRules scale_up;
  HpaScalingRules scale_down;
  // The autoscaling/v2 defaults: up 0 s, Max of {4 Pods, 100 Percent} per 15 s; down 300 s
  // (the controller's --horizontal-pod-autoscaler-downscale-stabilization), 100 Percent per 15 s.
  static HpaBehavior Defaults();
  // Reads a `behavior` node with the Kubernetes field names; unset fields take the defaults
  // (as the API server's defaulting does). Errors go to the node's ConfigErrors.
  static HpaBehavior Parse(const config::ConfigNode& node);
};

struct TimedValue {
  TimePoint at;
  int value = 0;
  bool outdated = false;  // scale events only: marked for reuse (markScaleEventsOutdated)
};

// What horizontal.go keeps per HPA: recommendations and scale events (both positive counts).
struct BehaviorHistory {
  std::vector<TimedValue> recommendations;
  std::vector<TimedValue> scale_up_events;
  std::vector<TimedValue> scale_down_events;

  static BehaviorHistory Load(const PersistentState& state);
  void Save(PersistentState& state) const;
  // Entries stamped after `now` (the clock went back: a reboot, a leader on a slower clock)
  // count as made now; left ahead they stayed inside every window for as long as they led.
  void NotAfter(TimePoint now);
};

struct NormalizeInput {
  int current = 0;
  int desired = 0;  // the policy's raw recommendation
  int min_replicas = 0;
  int max_replicas = 0;
};

struct Normalized {
  int stabilized = 0;  // after the windows
  int replicas = 0;    // after the rate policies and min/max
  // Kubernetes' condition reasons, string literals: "ScaleUpStabilized", "ScaleDownStabilized",
  // "ReadyForNewScale"; and "ScaleUpLimit", "TooManyReplicas", ... "DesiredWithinRange".
  std::string_view stabilize_reason;
  std::string_view limit_reason;
};

// stabilizeRecommendationWithBehaviors: records `desired` in the history and returns the
// recommendation bounded by the windows.
int StabilizeRecommendation(const HpaBehavior& b, BehaviorHistory& h, int current, int desired,
                            TimePoint now, std::string_view* reason = nullptr);
// convertDesiredReplicasWithBehaviorRate: applies the rate policies and min/max.
int ConvertWithBehaviorRate(const HpaBehavior& b, const BehaviorHistory& h,
                            const NormalizeInput& in, TimePoint now,
                            std::string_view* reason = nullptr);
// Both, as normalizeDesiredReplicasWithBehaviors does.
Normalized Normalize(const HpaBehavior& b, BehaviorHistory& h, const NormalizeInput& in,
                     TimePoint now);
// storeScaleEvent: records a change from `from` to `to` (no-op when equal).
void StoreScaleEvent(const HpaBehavior& b, BehaviorHistory& h, int from, int to, TimePoint now);

// The Stabilizer seam over the functions above. Min/max are left to Constraints (which run
// next); the result is the same as Kubernetes' because clamping commutes with the limits
// whenever current is inside [min, max].
class HpaBehaviorStabilizer final : public Stabilizer {
 public:
  explicit HpaBehaviorStabilizer(HpaBehavior b) : behavior_(std::move(b)) {}
  StabilizeResult Stabilize(int recommended, int current, TimePoint now,
                            PersistentState& state) const override;
  void RecordScale(int from, int to, TimePoint now, PersistentState& state) const override;
  const HpaBehavior& behavior() const { return behavior_; }

 private:
  HpaBehavior behavior_;
};

// `behavior` is the workload's behavior node (may be undefined). With `hpa_defaults`, an
// absent behavior means the Kubernetes defaults; otherwise an absent behavior means no
// stabilizer (nullptr). Errors are recorded in the node's ConfigErrors.
std::unique_ptr<Stabilizer> CreateStabilizer(const config::ConfigNode& behavior, bool hpa_defaults);

}  // namespace aiscale::decide
