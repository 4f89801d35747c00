// WorkloadEnv: what every simulated workload gets from the scenario besides its own config.
//
// Why: kinds are built through one factory table (workload_factory.h); this keeps their
// constructors uniform. The cluster outlives every workload built on it.
#pragma once

#include <cstdint>
#include <string>

namespace aiscale::sim {

class Cluster;
class RunCache;
class SimPool;

struct WorkloadEnv {
  std::string name;
  int initial_replicas = 1;
  uint64_t seed = 0;              // this workload's own seed, derived from the scenario's
  double scrape_interval_s = 15;  // how often the exporters measure
  double noise = 0.02;            // relative standard deviation of emitted readings
  Cluster* cluster = nullptr;
  double report_interval_s = 60;  // how often the report's timeline samples the workload
  RunCache* cache = nullptr;      // results shared by the scenario's runs (may be null)
  // In a run with a shared pool: the pool the replicas are placed on (valid while it runs),
  // and the GPUs the workload's tenant is guaranteed when it is the tenant's only workload (-1
  // otherwise: a guarantee shared by several workloads is no one workload's).
  const SimPool* pool = nullptr;
  int64_t guaranteed_gpus = -1;
  // The run stands for an idealized engine where restarts are free and instant (a pool
  // comparison's `free_borrowing` role): kinds that pay restarts pay none.
  bool free_restarts = false;
  // The scenario's duration (0: none): what arrives after it is never served in the run, so
  // yardsticks computed from the workload's input (the inference oracle) stop there too.
  double duration_s = 0;
};

}  // namespace aiscale::sim
