#include "act/slurm_pool_source.h"

#include <algorithm>
#include <map>
#include <utility>

namespace aiscale::act {
namespace {

bool InPartition(const SlurmNode& n, const std::string& partition) {
  return partition.empty() ||
         std::find(n.partitions.begin(), n.partitions.end(), partition) != n.partitions.end();
}

std::string Where(const std::string& partition) {
  return partition.empty() ? std::string("the cluster") : "partition " + partition;
}

}  // namespace

SlurmPoolSource::SlurmPoolSource(std::shared_ptr<CommandRunner> runner, SlurmCliOptions options,
                                 std::string partition)
    : runner_(std::move(runner)),
      cli_(*runner_, std::move(options)),
      partition_(std::move(partition)) {}

Result<PoolCapacity> SlurmPoolSource::Observe() {
  Result<std::vector<SlurmNode>> listed = cli_.Nodes(partition_);
  if (!listed.ok()) return listed.status().Wrap("unable to read the pool's size from Slurm");
  // sinfo -N lists a node once per partition it is in: each counts once.
  std::map<std::string, const SlurmNode*> nodes;
  for (const SlurmNode& n : *listed) {
    if (InPartition(n, partition_)) nodes.emplace(n.name, &n);
  }
  if (nodes.empty()) {
    return Status::NotFound("Slurm lists no node in " + Where(partition_) +
                            ": the pool's size is unknown");
  }
  int64_t gpus = 0, declared = 0;
  int usable = 0;
  std::string out;  // "node2 (idle+drain, 4 GPUs)"
  for (const auto& [name, n] : nodes) {
    declared += n->gpus;
    if (!n->unavailable) {
      gpus += n->gpus;
      usable += n->gpus > 0;
    } else if (n->gpus > 0) {
      out += (out.empty() ? "" : ", ") + name + " (" + n->state + n->flags + ", " +
             GpuCount(n->gpus) + ")";
    }
  }
  if (declared == 0) {
    return Status::Invalid("no node of " + Where(partition_) +
                           " declares a GPU in its gres (slurm.conf: GresTypes=gpu and "
                           "Gres=gpu:N on the nodes): the pool's size is unknown");
  }
  PoolCapacity c;
  c.gpus = gpus;
  c.detail = GpuCount(gpus) + " on " + std::to_string(usable) + " usable node(s) of " +
             Where(partition_) + " (Slurm gres)";
  if (!out.empty()) c.detail += "; not counted: " + out;
  return c;
}

}  // namespace aiscale::act
