#include "decide/pipeline.h"

#include "decide/stabilizer.h"

namespace aiscale::decide {

Result<Pipeline> BuildPipeline(const PolicyRegistry& registry, const config::ConfigNode& workload,
                               const config::ConfigNode& policy_node, double control_period_s,
                               double cold_start_s) {
  const size_t errors_before = workload.errors()->size();
  Pipeline p;
  const ConstraintsConfig cc = ConstraintsConfig::Parse(workload);
  p.constraints = std::make_unique<Constraints>(cc);
  p.context = {cc.min_replicas, cc.max_replicas, cc.granularity, control_period_s, cold_start_s};
  auto policy = registry.Create(policy_node, p.context);
  if (!policy.ok()) return policy.status().Wrap("unable to build workload " + workload.path());
  p.policy = std::move(policy).value();
  const bool hpa = p.policy->Name() == "hpa";
  p.stabilizer = CreateStabilizer(workload.Child("behavior"), hpa);
  if (workload.errors()->size() > errors_before) {
    return Status::Error("unable to build workload " + workload.path() + ": see config errors");
  }
  return p;
}

}  // namespace aiscale::decide
