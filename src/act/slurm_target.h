// SlurmTargetConfig: the `target:` of a workload run as Slurm batch jobs, one job per replica
// (engine: slurm).
//
// Parsed once at the edge (docs/architecture.md, practice 7): every error lands at its field path
// in the ConfigNode's ConfigErrors, unknown fields are rejected, and the caller checks the errors
// before building a SlurmActuator. Whether the script exists and the Slurm commands are on
// PATH is checked when the actuator starts, not here (`aiscale validate` runs anywhere).
// A plain value type; copy freely.
//
//   target: {engine: slurm, script: serve.sbatch, partition: gpu, base_port: 18100,
//            readiness: {http: /health}, grace_period: 30s, sbatch_args: [--gres=gpu:1]}
//
// Torchrun mode (one job per torchrun agent, examples/elastic/aiscale-slurm.yaml):
// `rendezvous_host_replica: 0` makes that replica the host of the c10d rendezvous store, which
// a scale-down takes only when it is the last one, and {rdzv_is_host} in the script renders
// "1" for it and "0" for the others (torchrun's --rdzv_conf=is_host=...).
#pragma once

#include <string>
#include <vector>

#include "act/local_target.h"
#include "core/config/config_node.h"
#include "core/time.h"

namespace aiscale::act {

struct SlurmTargetConfig {
  std::string script;        // batch-script template; {replica}, {port}, {workload} substituted
  std::string partition;     // empty: the cluster's default partition
  std::string job_name;      // empty: "aiscale-<workload name>"
  int base_port = 0;         // replica i listens on base_port + i on its node; 0: no ports
  LocalReadiness readiness;  // kNone or kHttp (probed at http://<node address>:<port><path>)
  Duration grace_period = Seconds(10);  // scancel --signal=TERM to scancel
  LocalPreStop pre_stop;  // command runs on the aiscale host; {host} is the job's node
  std::vector<std::string> sbatch_args;   // passed to sbatch before aiscale's own
  std::string slurm_conf;                 // empty: the SLURM_CONF aiscale runs with
  bool exclusive = true;                  // --exclusive: one replica per node
  Duration poll_interval = Seconds(2);    // squeue/sinfo and readiness, and resubmission
  Duration command_timeout = Seconds(5);  // each squeue/sinfo/sbatch/scancel call
  std::string run_dir;               // rendered scripts go to <run_dir>; empty: the caller chooses
  int rendezvous_host_replica = -1;  // torchrun mode: the rendezvous host; -1: none

  // Reads `target` (a map); errors land in target.errors() at their field paths.
  static SlurmTargetConfig Parse(const config::ConfigNode& target);

  int PortFor(int replica) const { return base_port > 0 ? base_port + replica : 0; }
  bool IsHost(int replica) const { return replica == rendezvous_host_replica; }
  // `text` with {replica}, {port}, {workload}, {host} and {rdzv_is_host} replaced.
  std::string Substitute(const std::string& text, const std::string& workload, int replica,
                         const std::string& host = "") const;
};

}  // namespace aiscale::act
