// hpa: the Kubernetes HorizontalPodAutoscaler as a Policy.
//
// Why: the reference every report compares against must be the real algorithm, not a look-
// alike. Each configured metric goes through hpa::CalcReplicas (replica_calculator.go) and
// the largest proposal wins, as computeReplicasForMetrics does. Per-instance values come from
// the signal snapshot; an instance with ready=false is an unready pod (Resource cpu metrics),
// and replicas without a value (current > instances) are pods with a missing metric. Missing
// or invalid signals follow Kubernetes: all metrics invalid -> no recommendation; some invalid
// and the rest would scale down -> no recommendation; never a scale-down on missing data.
//
//   policy:
//     name: hpa
//     tolerance: 0.1
//     metrics:
//       - {signal: gpu_util, type: Resource, target: {type: Utilization, value: 60}, request: 100}
//       - {signal: concurrency, type: Pods, target: {type: AverageValue, value: 8}}
//
// Values are in the signal's units; they are converted to milli-units (rounded up, like
// resource.Quantity.MilliValue) before the integer arithmetic Kubernetes does.
// Thread safety: immutable after Parse; Recommend is const and keeps no state.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "decide/policies/hpa_replica_calc.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {

struct HpaMetricConfig {
  std::string signal;
  hpa::MetricSpec spec;  // target_value already in milli-units (or percent)
  double target = 0;     // as written, for reasons
  double request = 0;    // per-pod request, Utilization targets
};

// What only the config decides in one metric's reason and facts, made once per policy.
struct HpaMetricText {
  std::string reason_head;  // "concurrency (Pods, AverageValue 24): "
  // Fact names, "<signal>.target" and so on.
  std::string target, valid, usage_ratio, new_usage_ratio, utilization_pct, usage, proposal,
      ready_pods, unready_pods, missing_pods;
};

struct HpaConfig {
  std::vector<HpaMetricConfig> metrics;
  double tolerance = 0.1;
  // Reads the policy node; every problem is recorded in its ConfigErrors.
  static HpaConfig Parse(const config::ConfigNode& node);
};

class HpaPolicy final : public Policy {
 public:
  explicit HpaPolicy(HpaConfig cfg);
  // The registry's factory; errors land in the node's ConfigErrors.
  static std::unique_ptr<Policy> Make(const config::ConfigNode& node, const WorkloadContext& ctx);
  std::string_view Name() const override { return "hpa"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override;
  std::vector<std::string> Signals() const override;
  // Resource and Pods metrics: a pod whose value was dropped is a pod without a metric, which
  // the HPA's own rule covers. Object and External totals are not: a partial sum vetoes.
  bool HandlesPartial(std::string_view signal) const override;

 private:
  HpaConfig cfg_;
  std::vector<HpaMetricText> text_;  // per metric, in cfg_.metrics order
};

// Signal value to Kubernetes milli-units (rounded up, with slack for binary fractions).
int64_t ToMilli(double v);

}  // namespace aiscale::decide
