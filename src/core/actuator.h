// Actuator: reads and sets the scale of a workload on its engine (Kubernetes, Slurm, local
// processes, the simulator).
//
// Contract: Observe returns the spec'd and ready replica counts. Apply sets the desired
// count and is idempotent: applying the current desired value is a no-op that succeeds.
// Both return errors as values ("unable to set scale for ns/name: 409 conflict"); an error
// leaves the engine as it was, as far as the actuator can tell. Thread-safe.
//
// Time bounds (the daemon calls Observe and Apply on the engines' own threads, with a deadline:
// control/engine_calls.h): Kubernetes, Observe is two GETs (scale, object) and Apply a GET and
// a PATCH (twice on a 409), each call ≤ call_timeout (10 s, retries included); Slurm, Observe
// reads the poller's last snapshot (no command), Apply is one squeue and one sbatch per replica
// added, each ≤ command_timeout (5 s; stops run on their own threads); local, in-process, no
// waits. Endpoints is called on the tick thread and never waits on the network or a command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/scale.h"

namespace aiscale {

class Actuator {
 public:
  virtual ~Actuator() = default;
  virtual std::string_view Name() const = 0;
  virtual Result<ScaleState> Observe(const WorkloadRef& ref) = 0;
  virtual Status Apply(const WorkloadRef& ref, int desired) = 0;
  // Sets both tiers at once: `awake` serving replicas (as Apply) and `asleep` kept asleep as
  // burst insurance. An engine with a warm tier wakes asleep replicas before it starts cold
  // ones and puts surplus awake ones to sleep before it removes them; one without it accepts
  // only asleep == 0 (then this is Apply) and says so otherwise (kInvalid).
  virtual Status ApplyTiers(const WorkloadRef& ref, int awake, int asleep) {
    if (asleep == 0) return Apply(ref, awake);
    return Status::Invalid("the " + std::string(Name()) +
                           " engine has no warm tier: it cannot keep replicas asleep");
  }
  // Where the workload's replicas can be reached, for sources that read them directly.
  // Engines that do not know (or do not say) return kNotFound.
  // The default names neither engine nor workload: the Controller asks for every workload every
  // tick, and building the names was a twentieth of a 10,000-workload tick; callers that show
  // the error wrap it with the workload.
  virtual Result<std::vector<ReplicaEndpoint>> Endpoints(const WorkloadRef& /*ref*/) {
    return Status::NotFound("this engine does not report replica endpoints");
  }
  // Stops whatever the actuator started itself (local processes) when the daemon exits;
  // engines that own their replicas (Kubernetes, Slurm) leave them running. Idempotent.
  virtual void Shutdown() {}
};

}  // namespace aiscale
