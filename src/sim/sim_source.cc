#include "sim/sim_source.h"

namespace aiscale::sim {

Status WorkloadDirectory::Add(SimWorkload* w) {
  const std::string key = w->ref().Key();
  if (!by_key_.emplace(key, w).second) {
    return Status::Error("unable to add simulated workload " + key + ": name already in use");
  }
  return Status::Ok();
}

SimWorkload* WorkloadDirectory::Find(const WorkloadRef& ref) const {
  auto it = by_key_.find(ref.Key());
  return it == by_key_.end() ? nullptr : it->second;
}

Result<std::vector<Observation>> SimSource::Fetch(const MetricQuery& q, TimePoint now) {
  SimWorkload* w = dir_.Find(q.workload);
  if (!w) {
    return Status::Error("unable to fetch " + q.signal + " for " + q.workload.Key() +
                         ": no such simulated workload");
  }
  return w->Signal(q.signal, now);
}

}  // namespace aiscale::sim
