// SimActuator: the simulator's Actuator; Observe and Apply go to the SimWorkload with the
// workload's key. Unknown workloads and engine refusals (not enough free nodes) are errors as
// values. The directory must outlive it. Single-threaded, like the simulator.
#pragma once

#include "core/actuator.h"
#include "sim/sim_pool.h"
#include "sim/sim_source.h"

namespace aiscale::sim {

class SimActuator final : public Actuator {
 public:
  // `pool` (may be null): the shared GPU pool the workloads' replicas must fit in.
  explicit SimActuator(const WorkloadDirectory& dir, SimPool* pool = nullptr)
      : dir_(dir), pool_(pool) {}
  std::string_view Name() const override { return "sim"; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override;
  Status Apply(const WorkloadRef& ref, int desired) override;
  Status ApplyTiers(const WorkloadRef& ref, int awake, int asleep) override;

 private:
  const WorkloadDirectory& dir_;
  SimPool* pool_;
};

}  // namespace aiscale::sim
