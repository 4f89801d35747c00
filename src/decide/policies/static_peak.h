// static-peak: the static baseline at the size a workload's peak needs, computed offline from
// the workload's own trace (for inference: the replicas the busiest minute needs to meet the
// SLO, sim/inference/oracle.h). The policy itself just holds `replicas`; the simulator's runner
// fills it in from SimWorkload::BaselineReplicas("static-peak") and starts the workload warm
// at that size. Without a value it holds the workload's max_replicas (the safe side).
#pragma once

#include <memory>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "decide/policy_registry.h"

namespace aiscale::decide {

class StaticPeakPolicy final : public Policy {
 public:
  explicit StaticPeakPolicy(int replicas) : replicas_(replicas) {}
  static std::unique_ptr<Policy> Make(const config::ConfigNode& node, const WorkloadContext& ctx);
  std::string_view Name() const override { return "static-peak"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override;
  std::vector<std::string> Signals() const override { return {}; }

 private:
  int replicas_;
};

}  // namespace aiscale::decide
