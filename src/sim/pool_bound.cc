#include "sim/pool_bound.h"

#include <algorithm>
#include <memory>

#include "sim/event_queue.h"
#include "sim/training_job.h"

namespace aiscale::sim {
namespace {

double ComputeRate(const BoundJob& j, int nodes, const ClusterConfig& cc) {
  if (nodes <= 0) return 0;
  return RatesFor(j.job, signals::Phase::kCompute, nodes, cc.gpus_per_node, cc.gpu_memory_gb)
      .samples_per_s;
}

// Nodes per job for one interval: minimums first (in input order, while nodes last), then one
// node at a time to the job whose compute throughput grows most.
std::vector<int> Divide(const PoolBoundInput& in, const std::vector<bool>& done, int nodes) {
  std::vector<int> out(in.jobs.size(), 0);
  for (size_t j = 0; j < in.jobs.size(); ++j) {
    if (done[j] || nodes < in.jobs[j].min_nodes) continue;
    out[j] = in.jobs[j].min_nodes;
    nodes -= out[j];
  }
  while (nodes > 0) {
    size_t best = in.jobs.size();
    double best_gain = 0;
    for (size_t j = 0; j < in.jobs.size(); ++j) {
      if (done[j] || out[j] == 0 || out[j] >= in.jobs[j].max_nodes) continue;
      const double gain = ComputeRate(in.jobs[j], out[j] + 1, in.cluster) -
                          ComputeRate(in.jobs[j], out[j], in.cluster);
      if (gain > best_gain) {
        best_gain = gain;
        best = j;
      }
    }
    if (best == in.jobs.size()) break;
    ++out[best];
    --nodes;
  }
  return out;
}

int FreeNodes(const PoolBoundInput& in, size_t interval) {
  const int replicas = interval < in.inference.size() ? in.inference[interval] : 0;
  const int64_t free = in.pool_gpus - int64_t{replicas} * in.inference_gpus;
  return static_cast<int>(std::max<int64_t>(0, free) / std::max(1, in.cluster.gpus_per_node));
}

}  // namespace

Result<PoolBoundResult> ComputePoolBound(const PoolBoundInput& in) {
  if (in.interval_s <= 0 || in.duration_s <= 0 || in.cluster.gpus_per_node <= 0) {
    return Status::Invalid("unable to compute the pool's training bound: no interval or duration");
  }
  EventQueue q;
  ClusterConfig cc = in.cluster;
  cc.provisioning_delay_s = 0;
  cc.nodes = 0;
  for (const BoundJob& j : in.jobs) cc.nodes += j.max_nodes;
  Cluster cluster(cc, q, 1);
  std::vector<bool> done(in.jobs.size(), false);
  const std::vector<int> first = Divide(in, done, FreeNodes(in, 0));
  std::vector<std::unique_ptr<TrainingJob>> jobs;
  for (size_t j = 0; j < in.jobs.size(); ++j) {
    TrainingJobConfig c = in.jobs[j].job;
    c.checkpoint_s = c.rendezvous_s = c.restore_s = 0;  // no restart cost
    WorkloadEnv env{in.jobs[j].name, first[j], 1, 15, 0, &cluster, in.interval_s};
    jobs.push_back(std::make_unique<TrainingJob>(c, env));
    jobs.back()->Start(q);
  }
  for (size_t k = 0; SinceEpochSeconds(q.Now()) < in.duration_s; ++k) {
    for (size_t j = 0; j < jobs.size(); ++j) done[j] = jobs[j]->Done();
    const std::vector<int> n = Divide(in, done, FreeNodes(in, k));
    for (size_t j = 0; j < jobs.size(); ++j) RETURN_IF_ERROR(jobs[j]->Apply(n[j]));
    q.RunUntil(AtSeconds(std::min(in.duration_s, static_cast<double>(k + 1) * in.interval_s)));
  }
  PoolBoundResult out;
  for (const auto& job : jobs) {
    const nlohmann::json s = job->Summary();
    const double samples = s.value("samples_trained", 0.0);
    out.per_job.push_back(samples);
    out.samples_trained += samples;
    out.completion_s.push_back(job->Done() ? s.value("completion_time_s", -1.0) : -1.0);
    out.training_gpu_hours += s.value("gpu_hours", 0.0);
  }
  return out;
}

}  // namespace aiscale::sim
