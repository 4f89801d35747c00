// SlurmPoolSource: the shared pool's size on Slurm (`pool: {from: slurm}`): the GPUs that the
// usable nodes of a partition declare in their gres (sinfo), each node counted once.
//
// A node down, drained or not responding adds nothing, and the detail names it. Slurm not
// answering, a partition with no nodes, or nodes that declare no GPU at all are errors, not a
// pool of 0: a pool of 0 would shrink every workload for what is an outage or a configuration
// mistake, and the PoolWatch holds on an error instead. Thread-safe (SlurmCli is).
#pragma once

#include <memory>
#include <string>

#include "act/slurm_cli.h"
#include "core/pool.h"

namespace aiscale::act {

class SlurmPoolSource final : public PoolSource {
 public:
  // `partition` empty: every partition's nodes.
  SlurmPoolSource(std::shared_ptr<CommandRunner> runner, SlurmCliOptions options,
                  std::string partition);

  std::string_view Name() const override { return "slurm"; }
  Result<PoolCapacity> Observe() override;

 private:
  std::shared_ptr<CommandRunner> runner_;
  SlurmCli cli_;
  std::string partition_;
};

}  // namespace aiscale::act
