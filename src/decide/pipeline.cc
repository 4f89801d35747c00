#include "decide/pipeline.h"

#include "decide/stabilizer.h"

namespace aiscale::decide {

const std::vector<std::string>& CommonWorkloadFields() {
  static const std::vector<std::string> kFields = {
      "name",          "kind",     "namespace", "min_replicas", "max_replicas", "granularity",
      "scale_to_zero", "behavior", "policy",    "staleness",    "cold_start"};
  return kFields;
}

Result<PolicySpec> BuildPipeline(const PolicyRegistry& registry, const config::ConfigNode& workload,
                                 const config::ConfigNode& policy_node, double control_period_s,
                                 double cold_start_s) {
  const size_t errors_before = workload.errors()->size();
  const ConstraintsConfig cc = ConstraintsConfig::Parse(workload);
  const WorkloadContext ctx{cc.min_replicas, cc.max_replicas, cc.granularity, control_period_s,
                            cold_start_s};
  auto made = registry.Create(policy_node, ctx);
  if (!made.ok()) return made.status().Wrap("unable to build workload " + workload.path());
  PolicySpec p;
  p.name = made->name;
  p.policy = std::move(made->policy);
  p.stabilizer = CreateStabilizer(workload.Child("behavior"), made->hpa_behavior);
  p.constraints = std::make_shared<const Constraints>(cc);
  if (workload.errors()->size() > errors_before) {
    return Status::Invalid("unable to build workload " + workload.path() + ": see config errors");
  }
  return p;
}

WorkloadSpec ReadWorkloadFields(const config::ConfigNode& w, double collect_interval_s) {
  WorkloadSpec s;
  s.ref.name = w.RequiredString("name");
  s.ref.kind = w.RequiredString("kind");
  s.ref.namespace_ = w.String("namespace", "");
  const ConstraintsConfig cc = ConstraintsConfig::Parse(w);
  s.min_replicas = cc.min_replicas;
  s.max_replicas = cc.max_replicas;
  s.granularity = cc.granularity;
  // docs/architecture.md: stale means older than 3 scrape intervals unless configured.
  s.staleness_s = w.DurationSeconds("staleness", 3 * collect_interval_s, config::Above(0));
  s.cold_start_s = w.DurationSeconds("cold_start", 0, config::AtLeast(0));
  return s;
}

}  // namespace aiscale::decide
