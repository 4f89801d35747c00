// ReplicaSet: who a workload's replicas are right now, as its engine reports them
// (Actuator::Endpoints), so that per-replica series can be told from foreign ones.
//
// Why: a metric store keeps series of replicas stopped minutes ago (Prometheus serves them
// from its 5-minute lookback, more so right after its own restart), and a relabelling can
// duplicate a pod's series; counted as pods, 7 series with 1 replica scaled 7 -> 1. A series
// names a replica when its instance, up to the first '/' (per-GPU series add "/gpu0"), is the
// replica's name (a pod name, "llm-0") or its host:port. Cheap to refill every tick: buffers
// are reused. Not thread-safe; a value type.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/scale.h"

namespace aiscale {

class ReplicaSet {
 public:
  static constexpr int kNone = -1;

  // Replaces the set with `endpoints` (their order numbers the replicas).
  void Assign(const std::vector<ReplicaEndpoint>& endpoints);
  size_t size() const { return ready_.size(); }
  bool ready(size_t replica) const { return ready_[replica]; }
  const std::string& name(size_t replica) const { return names_[replica]; }
  // The replica `instance` names, or kNone.
  int Find(std::string_view instance) const;

 private:
  std::vector<std::string> names_;
  std::vector<bool> ready_;
  // (identity, replica) sorted by identity: each replica's name and host:port.
  std::vector<std::pair<std::string, int>> ids_;
  size_t ids_used_ = 0;
};

}  // namespace aiscale
