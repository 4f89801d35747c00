#include "decide/policies/static_peak.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/numeric.h"

namespace aiscale::decide {

std::unique_ptr<Policy> StaticPeakPolicy::Make(const config::ConfigNode& node,
                                               const WorkloadContext& ctx) {
  (void)ctx;
  node.CheckKnown({"name", "replicas"});
  std::optional<int> replicas;
  if (node.Has("replicas")) {
    replicas = node.Int("replicas", 0, config::Between(0, kMaxReplicaCount));
  }
  return std::make_unique<StaticPeakPolicy>(replicas);
}

Recommendation StaticPeakPolicy::Recommend(const PolicyInput& in, PersistentState& state) const {
  int n = replicas_.value_or(0);
  if (!replicas_) {
    // The size it found, kept; restored state that no tick wrote (not one finite count) is
    // found again rather than read as 0 replicas.
    const std::vector<double>* kept = state.FindVec("replicas");
    if (!kept || kept->size() != 1 || !std::isfinite((*kept)[0]) || (*kept)[0] < 0) {
      state.Set("replicas", in.current);
    }
    n = ClampToInt(state.Get("replicas", in.current), 0, kMaxReplicaCount);
  }
  return {n,
          true,
          "static_peak",
          "fixed size for the peak: " + std::to_string(n),
          {{"replicas", static_cast<double>(n)}}};
}

}  // namespace aiscale::decide
