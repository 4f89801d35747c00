// SlurmActuator: runs a workload as Slurm batch jobs, one job per replica, and keeps the
// desired count itself (a job that leaves the queue, cancelled by hand or failed, is
// resubmitted).
//
// Jobs are tagged with the job name and `--comment=aiscale:<workload>:<replica>`, so aiscale
// finds its own jobs after a restart and never touches anyone else's. Scale-up submits the
// rendered script (lowest free replica index; port base_port + index); scale-down takes
// duplicates, then pending jobs, then the highest index, and the rendezvous host replica
// (torchrun mode, rendezvous_host_replica) only when it is the last: pre-stop hook, `scancel --full
// --signal=TERM`, then `scancel` after grace_period (on a thread of its own). A poll thread
// (every poll_interval) reads squeue and sinfo, probes readiness on <node address>:<port> and
// reconciles; Apply reconciles at once. Observe reports the last poll: current = our PENDING
// and RUNNING jobs (not being stopped), ready = RUNNING ones whose readiness passes,
// max_available = our RUNNING jobs + idle nodes of the partition (one job per node), and
// kUnavailable while squeue gets no answer from slurmctld (the controller then holds). Under
// restart_policy OnFailure (torchrun mode's default) a job of ours that ends COMPLETED is the
// workload's success: nothing is submitted again, and Observe says completed (the jobs still
// running count in ready until they end).
//
// Thread-safe: one mutex over the snapshot, never held across a command or a probe; one more
// serializes reconciles. Serves exactly one workload (`ref`); other refs are kNotFound.
// Shutdown leaves the jobs running (Slurm owns them) and waits for stops in progress.
#pragma once

#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "act/slurm_cli.h"
#include "act/slurm_target.h"
#include "core/actuator.h"
#include "core/clock.h"
#include "core/http.h"
#include "core/spec.h"

namespace aiscale::act {

// kNotFound naming the first Slurm command (squeue, sinfo, sbatch, scancel) not found in
// `path` (a PATH value), kPermissionDenied when one is not executable.
Status CheckSlurmCommands(const std::string& path);

// The `target: {engine: slurm, ...}` entry of the actuator registry: parses the config (errors
// at their field paths) and returns a factory that checks the Slurm commands and starts a
// SlurmActuator with the real SubprocessRunner.
Result<TargetSpec> ParseSlurmTarget(const config::ConfigNode& node);

class SlurmActuator final : public Actuator {
 public:
  SlurmActuator(WorkloadRef ref, SlurmTargetConfig cfg, std::shared_ptr<CommandRunner> runner,
                Clock& clock, HttpClient& http, int initial_replicas);
  ~SlurmActuator() override;  // Shutdown()
  SlurmActuator(const SlurmActuator&) = delete;
  SlurmActuator& operator=(const SlurmActuator&) = delete;

  // Checks the script (a readable file; kInvalid when it uses {rdzv_is_host} without
  // rendezvous_host_replica) and the run dir (writable); reconciles once (a
  // slurmctld that is down is not a startup error: Observe says kUnavailable until it answers)
  // and starts the poll thread unless `poll` is false (tests call Sync themselves).
  Status Start(bool poll = true);

  std::string_view Name() const override { return "slurm"; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override;
  // Records the desired count and reconciles now (sbatch for missing replicas, stops started
  // for extra ones). kInvalid when negative; kUnavailable when Slurm does not answer.
  Status Apply(const WorkloadRef& ref, int desired) override;
  // Each RUNNING job: {"<name>-<i>", node address, base_port + i, ready}.
  Result<std::vector<ReplicaEndpoint>> Endpoints(const WorkloadRef& ref) override;
  void Shutdown() override;

  // One poll: squeue, sinfo, readiness probes, then submissions and stops. What the poll
  // thread runs; public so tests step it.
  Status Sync();
  // Waits until no stop is in progress (tests).
  void WaitForStops();
  const std::string& job_name() const { return cfg_.job_name; }

 private:
  struct Replica {
    int index = 0;
    SlurmJob job;
    std::string host;  // the node's address; empty while pending
    bool ready = false;
  };
  struct Stopper {
    std::string job_id;
    std::thread thread;
    bool done = false;
  };
  struct Snapshot {
    std::vector<Replica> replicas;           // ours, active, not being stopped
    std::vector<std::string> completed_ids;  // ours, COMPLETED (exit 0)
    std::optional<int> idle_nodes;
    std::string capacity_error;
  };

  Result<Snapshot> Poll();
  void Probe(std::vector<Replica>& replicas);
  // Chooses replicas to stop and indices to submit. Caller holds mu_.
  void PlanLocked(std::vector<Replica>& stop, std::vector<int>& submit);
  // Under restart_policy OnFailure, a job of ours seen active and now COMPLETED ends the
  // workload: job_done_. Caller holds mu_.
  void NoteCompletionsLocked(const Snapshot& s);
  Status Submit(int index);
  void LaunchStopLocked(const Replica& r);
  void StopJob(Replica r);
  void RunPreStop(const Replica& r);
  void JoinDoneStoppersLocked(std::vector<std::thread>& out);
  void PollLoop();
  std::string DetailLocked() const;
  std::string ScriptPath(int index) const;

  const WorkloadRef ref_;
  SlurmTargetConfig cfg_;
  std::shared_ptr<CommandRunner> runner_;
  SlurmCli cli_;
  Clock& clock_;
  HttpClient& http_;
  const int initial_replicas_;

  std::mutex sync_mu_;  // one reconcile at a time
  mutable std::mutex mu_;
  std::condition_variable wake_;
  int desired_ = 0;
  bool shutting_down_ = false;
  Status last_status_ = Status::Unavailable("no answer from squeue yet");
  Snapshot snap_;
  std::set<std::string> stopping_;  // job ids being stopped (until they leave the queue)
  std::list<Stopper> stoppers_;
  std::string last_event_;             // "resubmitted replica 1 (job 6 left the queue)"
  std::set<std::string> seen_active_;  // job ids of ours seen pending or running
  bool job_done_ = false;              // a job of ours COMPLETED under OnFailure
  std::thread poller_;
  std::mutex shutdown_mu_;
};

}  // namespace aiscale::act
