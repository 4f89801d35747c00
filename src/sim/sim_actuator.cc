#include "sim/sim_actuator.h"

namespace aiscale::sim {

Result<ScaleState> SimActuator::Observe(const WorkloadRef& ref) {
  SimWorkload* w = dir_.Find(ref);
  if (!w) return Status::Error("unable to observe " + ref.Key() + ": no such simulated workload");
  return pool_ ? pool_->Observe(w) : w->Observe();
}

Status SimActuator::Apply(const WorkloadRef& ref, int desired) {
  SimWorkload* w = dir_.Find(ref);
  if (!w) return Status::Error("unable to scale " + ref.Key() + ": no such simulated workload");
  return pool_ ? pool_->Apply(w, desired) : w->Apply(desired);
}

Status SimActuator::ApplyTiers(const WorkloadRef& ref, int awake, int asleep) {
  SimWorkload* w = dir_.Find(ref);
  if (!w) return Status::Error("unable to scale " + ref.Key() + ": no such simulated workload");
  if (!pool_) return w->ApplyTiers(awake, asleep);
  // Asleep replicas would hold pool GPUs the allocator does not know of: no warm tier there yet.
  if (asleep == 0) return pool_->Apply(w, awake);
  return Status::Invalid("unable to keep replicas of " + ref.Key() +
                         " asleep: no warm tier inside a shared GPU pool");
}

}  // namespace aiscale::sim
