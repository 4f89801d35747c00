// SimPool: the simulated engine's side of a shared GPU pool. A workload's replicas run only on
// GPUs the pool has free, as a Kubernetes scheduler places pods: a scale-up that does not fit
// leaves the rest Pending (counted in the spec, not started), and Pending replicas start, in
// the order they were asked for, as soon as GPUs free up. Also the pool's PoolSource (its fixed
// size) and the report's record of it: GPU-seconds held and pending per workload.
//
// Why in the engine: the baselines a pool is compared with (each workload autoscaled on its
// own, a static partition) run without an allocator, and what stops them from using GPUs that
// are not there must be the cluster, as it is on a real one. Single-threaded, like the simulator.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/pool.h"
#include "core/scale.h"
#include "sim/event_queue.h"
#include "sim/sim_workload.h"

namespace aiscale::sim {

class SimPool final : public PoolSource {
 public:
  SimPool(int64_t gpus, const EventQueue& q) : gpus_(gpus), q_(q) {}

  // Registers a workload whose replicas take `gpus_per_replica` GPUs each; `initial` replicas
  // are placed at once (the run starts with them running), as far as they fit.
  void Add(SimWorkload* w, int gpus_per_replica, int initial);
  // The workload's state with current = its spec (Pending replicas included).
  Result<ScaleState> Observe(SimWorkload* w);
  // Sets the spec; starts what fits now, leaves the rest Pending; a smaller spec drops Pending
  // replicas first, then stops running ones and lets waiting workloads start.
  Status Apply(SimWorkload* w, int desired);

  std::string_view Name() const override { return "sim"; }
  Result<PoolCapacity> Observe() override;

  int64_t size() const { return gpus_; }
  int64_t IdleGpus() const { return Free(); }  // GPUs no running replica holds now
  // For report.json: per workload GPU-seconds held and pending, and the pool's utilization.
  nlohmann::json Summary();
  double HeldGpus() const;  // now
  double PendingGpus() const;

 private:
  struct Entry {
    SimWorkload* w = nullptr;
    int gpus = 1;
    int spec = 0;     // replicas asked for
    int running = 0;  // replicas placed on GPUs (what the workload itself was told)
    TimePoint waiting_since{};
    double held_gpu_s = 0;
    double pending_gpu_s = 0;
  };
  Entry* Find(SimWorkload* w);
  int64_t Free() const;
  void Account();       // integrates held and pending GPU-seconds up to now
  void PlaceWaiting();  // starts Pending replicas that fit, oldest wish first
  Status Place(Entry& e, int running);

  int64_t gpus_;
  const EventQueue& q_;
  std::vector<Entry> entries_;
  TimePoint accounted_{};
  double used_gpu_s_ = 0;
};

}  // namespace aiscale::sim
