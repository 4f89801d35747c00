#include "sim/scenario_pool.h"

#include "decide/pool_config.h"

namespace aiscale::sim {

void ReadScenarioPool(const config::ConfigNode& spec, Scenario& s) {
  if (!spec.Has("pool")) return;
  const config::ConfigNode pool = spec.Child("pool");
  s.pool = decide::ParsePool(pool);
  s.pool_node = pool;
  if (pool.Has("from")) {
    pool.ErrorAt("from", "a simulated pool has no engine to ask: give its size");
  }
}

void ReadScenarioMembership(const config::ConfigNode& w, const Scenario& s, WorkloadSpec& spec) {
  decide::ReadPoolMembership(w, s.pool ? &*s.pool : nullptr, spec);
}

const std::vector<std::string>& PoolRoles() {
  static const std::vector<std::string> kRoles = {
      "static_partition", "separate_autoscalers", "whole_job", "pool", "alone",
      "static_quotas",    "free_borrowing"};
  return kRoles;
}

bool IsPerWorkloadEntry(const config::ConfigNode& c) {
  return c.IsMap() && !c.Has("name") && c.Has("label");
}

void CheckPerWorkloadEntry(const config::ConfigNode& c, const Scenario& s) {
  c.CheckKnown({"label", "workloads", "pool", "role"});
  if (c.String("label", "").empty()) c.ErrorAt("label", "must not be empty");
  if (c.Has("role")) c.Enum("role", "", PoolRoles());
  const config::ConfigNode ws = c.Child("workloads");
  for (const auto& [name, policy] : ws.Entries()) {
    bool known = false;
    for (const ScenarioWorkload& w : s.workloads) known = known || w.name == name;
    if (!known) ws.ErrorAt(name, "no workload named '" + name + "' in spec.workloads");
    const bool ok = policy.raw().IsScalar() || (policy.IsMap() && policy.Has("name"));
    if (!ok) policy.Error("a policy name or a policy map with a name");
  }
}

std::optional<PoolSpec> PoolForEntry(const config::ConfigNode& c, const Scenario& s) {
  const bool has = c.IsMap() && c.Has("pool");
  if (!s.pool) {
    if (has) c.ErrorAt("pool", "the scenario has no pool (spec.pool) to run differently");
    return std::nullopt;
  }
  if (!has) return s.pool;
  const config::ConfigNode o = c.Child("pool");
  if (o.raw().IsScalar()) {
    if (o.raw().Scalar() != "off") o.Error("'off' or a map of pool fields to replace");
    PoolSpec off = *s.pool;
    off.allocate = false;
    return off;
  }
  if (!o.IsMap()) {
    o.Error("'off' or a map of pool fields to replace");
    return s.pool;
  }
  // The scenario's pool with the entry's fields put in place, read by the same reader.
  YAML::Node merged = YAML::Clone(s.pool_node->raw());
  for (const auto& [key, value] : o.Entries()) merged[key] = value.raw();
  const config::ConfigNode node(merged, o.path(), std::make_shared<const std::string>(o.file()),
                                o.errors(), o.raw().Mark());
  return decide::ParsePool(node);
}

std::optional<config::ConfigNode> EntryPolicyFor(const config::ConfigNode& c,
                                                 const std::string& workload) {
  if (!IsPerWorkloadEntry(c) || !c.Child("workloads").Has(workload)) return std::nullopt;
  return c.Child("workloads").Child(workload);
}

}  // namespace aiscale::sim
