// WorkloadRef and ScaleState: which workload, and how big it is now.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiscale {

struct WorkloadRef {
  std::string kind;        // e.g. "TrainingJob", "InferenceService", "Deployment"
  std::string namespace_;  // may be empty outside Kubernetes
  std::string name;
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
  // Where an engine object of this workload lives when its config leaves them out: the
  // namespace given, else the workload's, else "default"; the name given, else the workload's.
  std::string ObjectNamespace(const std::string& given) const {
    if (!given.empty()) return given;
    return namespace_.empty() ? "default" : namespace_;
  }
  std::string ObjectName(const std::string& given) const { return given.empty() ? name : given; }
};

// What an Actuator reports: the spec'd replica count and how many are ready now.
struct ScaleState {
  int current = 0;  // desired replicas in the engine's spec
  int ready = 0;    // replicas ready to do work
  // The largest scale the engine could reach right now (current + free capacity), in
  // replicas; nullopt when the engine cannot tell.
  std::optional<int> max_available;
  // Why ready < current, or what the engine is doing about it ("replica 2 exited with status 1
  // three times; next start in 8 s"); empty when there is nothing to say. Goes into the Decision.
  std::string detail;
  // The workload finished its work (a job: an agent exited 0, a Slurm job of it COMPLETED, its
  // PyTorchJob's status says Succeeded): the engine starts nothing again, and the Controller no
  // longer asks the policy or applies; its Decisions say kRuleCompleted. Replicas still
  // finishing (exiting) count in `ready` until they are gone.
  bool completed = false;
  // Replicas kept in the warm tier, as spec'd (`current`'s counterpart; not counted in it): each
  // loaded once, then asleep with its weights offloaded to host memory, waking in seconds. 0 on
  // engines without one.
  int asleep = 0;
  // Of them, those asleep now (`ready`'s counterpart): the rest are still loading, and waking
  // one of those takes the rest of its cold start.
  int asleep_ready = 0;
};

// The rule of the Decisions of a completed workload (ScaleState::completed), and of a training
// policy that saw its job report no samples remaining.
inline constexpr std::string_view kRuleCompleted = "completed";

// Where one replica of a workload can be reached (its exposition endpoint, its readiness
// probe): what an actuator that knows its replicas (local processes, Slurm jobs) reports, so a
// scrape source can read the replicas directly, the way AIBrix reads vLLM pods.
struct ReplicaEndpoint {
  std::string instance;  // stable name of the replica, e.g. "llm-0" or a pod name
  std::string host;      // e.g. "127.0.0.1"
  int port = 0;
  bool ready = false;
};

}  // namespace aiscale
