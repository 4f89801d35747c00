// static-peak: the static baseline at the size a workload's peak needs, computed offline from
// the workload's own trace (for inference: the replicas the busiest minute needs to meet the
// SLO, sim/inference/oracle.h). The policy itself just holds a size: `replicas` when given,
// else the size the workload had at its first tick, remembered in its state (the simulator's
// runner starts the workload warm at SimWorkload::BaselineReplicas("static-peak"), so the spec
// is built once, before that size is known).
#pragma once

#include <memory>
#include <optional>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {

class StaticPeakPolicy final : public Policy {
 public:
  explicit StaticPeakPolicy(std::optional<int> replicas) : replicas_(replicas) {}
  static std::unique_ptr<Policy> Make(const config::ConfigNode& node, const WorkloadContext& ctx);
  std::string_view Name() const override { return "static-peak"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override;
  std::vector<std::string> Signals() const override { return {}; }

 private:
  std::optional<int> replicas_;
};

}  // namespace aiscale::decide
