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

}  // namespace aiscale::sim
