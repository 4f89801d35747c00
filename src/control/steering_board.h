// SteeringBoard: the operators' overrides (pause, pin) of every workload, set through the API
// (SteeringControl) and read by the Controller once per tick (Snapshot).
//
// Why here: an override must survive a restart and be told apart from the policy's own work,
// so Apply writes it to the Store (state key "<workload>/steering") together with a Decision
// that records the action ("paused by API ...") in one commit, before it takes effect. The
// Controller restores each workload's override when it adds the workload.
//
// Thread-safe: Apply calls are serialized by one mutex; Snapshot hands out an immutable map,
// replaced (never changed in place) by each Apply, so a tick reads it without holding a lock.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "core/steering_control.h"
#include "core/store.h"
#include "core/workload_view.h"

namespace aiscale::control {

using SteeringMap = std::map<std::string, Steering>;

class SteeringBoard final : public SteeringControl {
 public:
  // `store` may be null: overrides then last until the process stops. `view` resolves names
  // and bounds (min/max replicas) and gives the scale a recorded action shows.
  SteeringBoard(Clock& clock, Store* store, const LiveView& view);

  // Loads `key`'s stored override (the Controller calls it in Add). An expired one is dropped.
  Status Restore(const std::string& key);
  // Every override in force or stored (expired ones included; Steer ignores them).
  std::shared_ptr<const SteeringMap> Snapshot() const;
  Result<SteerOutcome> Apply(const SteerRequest& request) override;

  static std::string StateKey(const std::string& key) { return key + "/steering"; }

 private:
  Result<WorkloadView> Resolve(const std::string& name) const;
  // The override `r` asks for on top of `now_in_force`, and the words that record it.
  Result<Steering> Next(const SteerRequest& r, const WorkloadView& w, const Steering& in_force,
                        WallTime now, std::string& message) const;
  Decision Record(const WorkloadView& w, const Steering& s, const std::string& message) const;

  Clock& clock_;
  Store* const store_;
  const LiveView& view_;
  std::mutex apply_mu_;        // one Apply at a time: read, write the store, publish
  mutable std::mutex map_mu_;  // guards map_ (the pointer, not the map it points to)
  std::shared_ptr<const SteeringMap> map_;
};

}  // namespace aiscale::control
