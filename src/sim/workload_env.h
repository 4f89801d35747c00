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

struct WorkloadEnv {
  std::string name;
  int initial_replicas = 1;
  uint64_t seed = 0;              // this workload's own seed, derived from the scenario's
  double scrape_interval_s = 15;  // how often the exporters measure
  double noise = 0.02;            // relative standard deviation of emitted readings
  Cluster* cluster = nullptr;
  double report_interval_s = 60;  // how often the report's timeline samples the workload
  RunCache* cache = nullptr;      // results shared by the scenario's runs (may be null)
};

}  // namespace aiscale::sim
