#include "decide/policies/static_peak.h"

#include <string>

namespace aiscale::decide {

std::unique_ptr<Policy> StaticPeakPolicy::Make(const config::ConfigNode& node,
                                               const WorkloadContext& ctx) {
  node.CheckKnown({"name", "replicas"});
  return std::make_unique<StaticPeakPolicy>(
      node.Int("replicas", ctx.max_replicas, config::AtLeast(0)));
}

Recommendation StaticPeakPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  (void)in;
  (void)state;
  return {replicas_,
          true,
          "static_peak",
          "fixed size for the peak: " + std::to_string(replicas_),
          {{"replicas", static_cast<double>(replicas_)}}};
}

}  // namespace aiscale::decide
