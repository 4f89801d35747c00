// FakeActuator: an in-memory engine for Controller tests. Records every Apply, can lag
// readiness behind the spec, and can be told to fail Observe or Apply (like leveldb's
// SpecialEnv). Not a mock: it behaves like an engine whose pods become ready on request.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/actuator.h"

namespace aiscale::testing {

class FakeActuator final : public Actuator {
 public:
  std::string_view Name() const override { return "fake"; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override {
    if (fail_observe || fail_observe_of == ref.Key()) {
      return Status::Error("unable to observe " + ref.Key() + ": injected");
    }
    auto& s = state[ref.Key()];
    return s;
  }
  Status Apply(const WorkloadRef& ref, int desired) override {
    if (fail_apply) return Status::Error("unable to apply scale to " + ref.Key() + ": injected");
    applies.push_back({ref.Key(), desired});
    auto& s = state[ref.Key()];
    s.current = desired;
    if (instant_ready) s.ready = desired;
    return Status::Ok();
  }
  Result<std::vector<ReplicaEndpoint>> Endpoints(const WorkloadRef& ref) override {
    auto it = endpoints.find(ref.Key());
    if (it == endpoints.end()) return Actuator::Endpoints(ref);
    return it->second;
  }
  void Set(const std::string& key, int current, int ready) {
    state[key].current = current;
    state[key].ready = ready;
  }

  std::map<std::string, ScaleState> state;
  // Replicas by workload key; a workload without an entry has engine that does not say.
  std::map<std::string, std::vector<ReplicaEndpoint>> endpoints;
  std::vector<std::pair<std::string, int>> applies;
  bool fail_observe = false;
  std::string fail_observe_of;  // fails Observe of this workload key alone
  bool fail_apply = false;
  bool instant_ready = true;
};

}  // namespace aiscale::testing
