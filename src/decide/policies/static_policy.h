// static: always the configured size. The baseline every report compares against.
#pragma once

#include "core/config/config_node.h"
#include "core/policy.h"

namespace aiscale::decide {

class StaticPolicy final : public Policy {
 public:
  explicit StaticPolicy(int replicas) : replicas_(replicas) {}
  // Reads `replicas` (>= 0) from the policy node.
  static StaticPolicy Parse(const config::ConfigNode& node, int fallback);
  std::string_view Name() const override { return "static"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override;
  std::vector<std::string> Signals() const override { return {}; }

 private:
  int replicas_;
};

}  // namespace aiscale::decide
