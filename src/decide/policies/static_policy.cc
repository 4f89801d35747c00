#include "decide/policies/static_policy.h"

#include <string>

#include "core/numeric.h"

namespace aiscale::decide {

StaticPolicy StaticPolicy::Parse(const config::ConfigNode& node, int fallback) {
  return StaticPolicy(node.Int("replicas", fallback, config::Between(0, kMaxReplicaCount)));
}

Recommendation StaticPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  (void)in;
  (void)state;
  return {replicas_, true, "static", "fixed size " + std::to_string(replicas_), {}};
}

}  // namespace aiscale::decide
