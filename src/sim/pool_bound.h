// PoolBound: the training goodput a mixed pool could reach at best (issue 23's upper bound):
// every GPU the inference oracle leaves free goes to the training jobs, re-divided every oracle
// interval with no restart cost, no provisioning delay and no failures.
//
// How: each interval, the free GPUs (pool - the inference oracle's replicas x GPUs a replica)
// become whole training nodes, handed out one at a time to the job whose compute throughput
// grows most by it (greedy on concave curves: the most samples/s a node count can buy), each job
// within its [min, max]; then each job runs that interval at that size in the simulator's own
// job model (training_job.h: its load, compute and eval phases), restarts costing nothing. A
// job that finishes gives its nodes back at the next interval. Deterministic; single-threaded.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "sim/cluster.h"
#include "sim/training_model.h"

namespace aiscale::sim {

struct BoundJob {
  std::string name;
  TrainingJobConfig job;
  int min_nodes = 1;
  int max_nodes = 1;
};

struct PoolBoundInput {
  int64_t pool_gpus = 0;
  ClusterConfig cluster;       // the nodes' GPUs and memory (its size is ignored)
  double interval_s = 60;      // the inference oracle's interval
  std::vector<int> inference;  // the oracle's replicas per interval
  int inference_gpus = 1;      // GPUs per inference replica
  double duration_s = 0;       // the run's length
  std::vector<BoundJob> jobs;
};

struct PoolBoundResult {
  double samples_trained = 0;        // all jobs
  std::vector<double> per_job;       // samples, in input order
  std::vector<double> completion_s;  // -1 when not finished within the duration
  double training_gpu_hours = 0;
};

Result<PoolBoundResult> ComputePoolBound(const PoolBoundInput& in);

}  // namespace aiscale::sim
