// SimSource and SimActuator's shared routing: workload key -> SimWorkload.
//
// SimSource is the simulator's MetricSource: Fetch asks the workload for its readings of one
// signal at `now`; an unknown workload is an error (missing data for the Controller).
// The workloads must outlive it. Single-threaded, like the simulator.
#pragma once

#include <map>
#include <string>

#include "core/metric_source.h"
#include "sim/sim_workload.h"

namespace aiscale::sim {

class WorkloadDirectory {
 public:
  // Fails when the key is taken.
  Status Add(SimWorkload* w);
  SimWorkload* Find(const WorkloadRef& ref) const;

 private:
  std::map<std::string, SimWorkload*> by_key_;
};

class SimSource final : public MetricSource {
 public:
  explicit SimSource(const WorkloadDirectory& dir) : dir_(dir) {}
  std::string_view Name() const override { return "sim"; }
  Result<std::vector<Observation>> Fetch(const MetricQuery& q, TimePoint now) override;

 private:
  const WorkloadDirectory& dir_;
};

}  // namespace aiscale::sim
