// PolicyRegistry: the explicit list of policy names and their factories (docs/architecture.md,
// practice 6).
//
// Why: a plain list in policy_registry.cc, not static-init registration, so what exists is
// readable in one place and duplicate names fail when the registry is built.
// Factories parse their own config node; any error recorded there makes Create fail, so no
// half-valid policy exists.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "core/result.h"

namespace aiscale::decide {

// What a policy may need to know about its workload beyond its own fields.
struct WorkloadContext {
  int min_replicas = 1;
  int max_replicas = 100;
  int granularity = 1;
  double control_period_s = 15;
  // Provisioning delay + model load (inference) or restart cost (training), seconds.
  double cold_start_s = 0;
};

using PolicyFactory = std::unique_ptr<Policy> (*)(const config::ConfigNode& node,
                                                  const WorkloadContext& ctx);

struct PolicyEntry {
  std::string name;
  PolicyFactory factory;
  // The workload's stabilizer when it gives no `behavior`: the HPA's default behavior (true,
  // as the HPA controller applies it), or none (the policy paces itself).
  bool hpa_behavior = false;
};

// A created policy with what its registry entry says about it.
struct MadePolicy {
  std::string name;
  std::unique_ptr<Policy> policy;
  bool hpa_behavior = false;
};

class PolicyRegistry {
 public:
  // The built-in list; an error if two entries share a name.
  static Result<PolicyRegistry> Default();
  static Result<PolicyRegistry> FromEntries(std::vector<PolicyEntry> entries);

  // `node` is the workload's `policy` map (its `name` field selects the entry).
  Result<MadePolicy> Create(const config::ConfigNode& node, const WorkloadContext& ctx) const;
  std::vector<std::string> Names() const;

 private:
  std::vector<PolicyEntry> entries_;
};

}  // namespace aiscale::decide
