// LocalActuator: runs N replicas of a command on this machine (a single GPU box, end-to-end
// tests, later torchrun agents), each in its own process group, and keeps them at the desired
// count.
//
// Why a supervisor thread: Apply only records the desired count and wakes the supervisor, so a
// controller tick never waits on process work; the supervisor reaps exits, probes readiness
// (~0.5 s), enforces ready_timeout, restarts crashed replicas with exponential backoff and
// starts scale-downs; each stop (pre-stop hook, SIGTERM, grace, SIGKILL to the group) runs on
// a worker thread of its own. Scale-up takes the lowest free indices; scale-down removes the
// highest, except that in torchrun mode the replica hosting the rendezvous store
// (rendezvous_host_replica) goes only when it is the last one. Under restart_policy OnFailure
// (torchrun's default) a replica that exits 0 ends the job: nothing is started again, and
// Observe says completed (the replicas still finishing count in ready until they exit). Children
// never outlive the actuator: PR_SET_PDEATHSIG covers a killed aiscale, pid records in run_dir let
// the next Start kill what a crashed one left, and Shutdown (also run by the destructor) stops and
// reaps every replica.
//
//   LocalActuator act(ref, LocalTargetConfig::Parse(node), clock, http, /*initial=*/1);
//   RETURN_IF_ERROR(act.Start());   // kNotFound: no such command; kUnavailable: port in use
//   act.Apply(ref, 3);              // returns at once
//   act.Observe(ref)->ready;        // replicas whose readiness passes now
//
// In a pool of GPU slots (UseGpuSlots): a replica takes gpus_per_replica slots when its process
// starts ({gpus} and CUDA_VISIBLE_DEVICES name them) and gives them back once its process is
// gone (after its pre-stop hook and exit, a crash, or a ready_timeout kill); one that finds too
// few free is not started, stays pending and retries every supervisor tick, and Observe's detail
// says who holds the slots. A restarted replica gets its old slots back when they are free.
//
// Thread-safe: one mutex over the replica table, never held across I/O; Observe, Apply and
// Endpoints do no I/O. The actuator serves exactly one workload (`ref`); other refs are
// kNotFound.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "act/local_target.h"
#include "act/readiness.h"
#include "core/actuator.h"
#include "core/clock.h"
#include "core/gpu_slots.h"
#include "core/http.h"

namespace aiscale::act {

class LocalActuator final : public Actuator {
 public:
  LocalActuator(WorkloadRef ref, LocalTargetConfig cfg, Clock& clock, HttpClient& http,
                int initial_replicas);
  ~LocalActuator() override;  // Shutdown()
  LocalActuator(const LocalActuator&) = delete;
  LocalActuator& operator=(const LocalActuator&) = delete;

  // Checks the command (exists, executable), the workdir, the run dir (writable) and the
  // initial replicas' ports (free); kills process groups a crashed previous aiscale recorded
  // in the run dir; then starts the supervisor, which starts the initial replicas (a desired
  // count Applied before Start is replaced by initial_replicas).
  // kNotFound / kPermissionDenied / kUnavailable (port in use) / kConflict (started twice).
  Status Start();
  // Before Start: place the replicas in `slots` (shared with the daemon's other local
  // workloads), `per_replica` slots each. Start then fails (kInvalid) when per_replica is more
  // than the table has; without a table, a command that uses {gpus} fails to Start.
  void UseGpuSlots(std::shared_ptr<GpuSlots> slots, int per_replica);

  std::string_view Name() const override { return "local"; }
  // current = desired; ready = replicas whose readiness passes now (and, with a warm tier,
  // awake); asleep = replicas of the warm tier confirmed asleep; detail says why not.
  // completed once a replica exited 0 under restart_policy OnFailure (the job finished; the
  // replicas still running, counted in ready, are left to exit).
  Result<ScaleState> Observe(const WorkloadRef& ref) override;
  // Records the desired count and wakes the supervisor; kInvalid when negative,
  // kUnavailable after Shutdown.
  Status Apply(const WorkloadRef& ref, int desired) override;
  // With `warm_tier` configured: `awake` replicas serve and `asleep` more are kept loaded and
  // asleep (the highest indices); the supervisor sleeps and wakes them through the replica's
  // port, so a scale-up wakes a sleeper before it starts a cold one. Without it, asleep > 0 is
  // kInvalid (the Controller then serves the awake size alone and says why).
  Status ApplyTiers(const WorkloadRef& ref, int awake, int asleep) override;
  // Each running replica: {"<name>-<i>", "127.0.0.1", base_port + i, ready}.
  Result<std::vector<ReplicaEndpoint>> Endpoints(const WorkloadRef& ref) override;
  // Stops every replica (pre-stop, SIGTERM, grace, SIGKILL to the group), reaps them and
  // stops the supervisor. Blocks until done. Idempotent.
  void Shutdown() override;

  // The pids of the replicas running now (being stopped included), for tests and status.
  std::vector<pid_t> Pids() const;
  // Where the actuator records pids and (by default) logs.
  const std::string& run_dir() const { return cfg_.run_dir; }
  // Replica i's log file.
  std::string LogPath(int replica) const;

 private:
  struct Replica {
    int index = 0;
    pid_t pid = 0;  // 0: waiting to (re)start at next_start
    TimePoint started_at{};
    bool ready = false;
    bool ever_ready = false;  // readiness passed since this process started
    bool completed = false;   // exited 0 under restart_policy OnFailure
    int failures = 0;         // crashes (or failed starts) in a row
    TimePoint next_start{};
    std::string last_error;  // "replica 2 exited with status 1"
    LogScan log;             // log readiness: how far this process's output has been read
    TimePoint next_probe{};
    std::vector<int> gpus;       // GPU slots held by the running process
    std::vector<int> last_gpus;  // the slots it ran on last (preferred on a restart)
    std::string pending;         // why it waits for GPU slots; empty when not waiting
    bool asleep = false;         // its sleep call answered 2xx (and no wake since)
    TimePoint next_tier_call{};  // after a failed sleep or wake call: when to try again
    bool tier_call = false;      // a sleep or wake call to this process is in flight
  };
  struct Stopper {
    int index = 0;
    pid_t pid = 0;
    std::vector<int> gpus;  // given back once the process is gone
    std::thread thread;
    std::atomic<bool> done{false};
  };
  // A sleep or wake call on its own thread: a wake takes as long as the weights take to come
  // back (seconds to a minute), and the supervisor must not stop reaping and starting meanwhile.
  struct TierCall {
    int index = 0;
    pid_t pid = 0;
    bool sleep = false;
    std::string error;  // empty: the replica answered 2xx
    std::thread thread;
    std::atomic<bool> done{false};
  };
  struct ProbeJob {
    int index;
    pid_t pid;
    bool ever_ready;
    LogScan log;
  };

  // Records both sizes and wakes the supervisor (Apply and ApplyTiers, after their own checks);
  // kInvalid when negative, kUnavailable after Shutdown.
  Status SetSizes(const WorkloadRef& ref, int awake, int asleep);
  void SupervisorLoop();
  void Tick();
  void ReapExits();
  void Probe();
  void EnforceReadyTimeout();
  void Reconcile();
  // Sleeps loaded replicas ranked past desired_ and wakes sleepers ranked within it
  // (local_tiers.cc).
  void Tiers();
  // POST the sleep or wake path to replica `index`; empty on a 2xx answer, else why not.
  std::string CallTier(int index, bool sleep);
  // Starts a call on its own thread. Caller holds mu_.
  void LaunchTierCallLocked(int index, pid_t pid, bool sleep);
  // Joins the finished calls (all of them, waiting, with `all`) and records their answers.
  void CollectTierCalls(bool all);
  void StartReplica(int index);
  // The GPU slots for replica `index` (empty outside a pool); false, with why in `pending`, when
  // too few are free.
  bool TakeGpus(int index, std::vector<int>& gpus, std::string& pending);
  void ReleaseGpus(int index, const std::vector<int>& gpus);
  std::string Holder(int index) const;  // the slot table's name for replica `index`
  void JoinFinishedStoppers(bool all);
  // Takes the finished entries (a `done` flag and a `thread`) out of `list` and joins them,
  // unlocked; with `all`, waits first until every entry is done. T: Stopper or TierCall.
  template <typename T>
  std::list<T> JoinFinished(std::list<T>& list, bool all) {
    std::list<T> finished;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (all) {
        wake_.wait(lock, [&list] {
          return std::all_of(list.begin(), list.end(), [](const T& e) { return e.done.load(); });
        });
      }
      for (auto it = list.begin(); it != list.end();) {
        auto next = std::next(it);
        if (it->done) finished.splice(finished.end(), list, it);
        it = next;
      }
    }
    for (T& e : finished) e.thread.join();
    return finished;
  }
  // Moves `pid` of replica `index` (holding `gpus`) to a stopper thread. Caller holds mu_.
  void LaunchStopLocked(int index, pid_t pid, bool pre_stop, std::vector<int> gpus);
  void StopReplica(int index, pid_t pid, bool pre_stop, const std::string& gpus);
  void RunPreStop(int index, const std::string& gpus);
  // Whether the replica in `job` is ready now; advances job.log.
  bool ProbeOne(ProbeJob& job);
  // Records a failure of replica r and when it may start again. Caller holds mu_.
  void RecordFailureLocked(Replica& r, std::string why, TimePoint now);
  std::string DetailLocked(TimePoint now) const;
  // "8 s", "0.4 s": whole seconds from 10 s up.
  static std::string FormatSeconds(Duration d);
  bool IndexBusyLocked(int index) const;
  std::string RecordPath(int replica) const;
  std::string WorkloadFileName() const;
  Status CheckStartable(int initial);
  Status KillLeftovers();

  const WorkloadRef ref_;
  LocalTargetConfig cfg_;
  Clock& clock_;
  HttpClient& http_;
  const int initial_replicas_;
  std::shared_ptr<GpuSlots> slots_;  // null: not in a pool of GPU slots
  int gpus_per_replica_ = 0;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  int desired_ = 0;
  int asleep_desired_ = 0;  // warm tier: replicas past desired_ kept asleep
  bool started_ = false;
  bool shutting_down_ = false;
  bool wake_pending_ = false;        // Apply or a stopper asked the supervisor to look now
  std::map<int, Replica> replicas_;  // the replicas that should run, by index
  bool job_done_ = false;            // a replica completed (OnFailure): start nothing again
  std::list<Stopper> stoppers_;      // replicas being stopped (not current, not ready)
  std::list<TierCall> tier_calls_;   // sleep and wake calls in flight or not yet collected
  std::thread supervisor_;
  std::mutex shutdown_mu_;  // serializes Shutdown callers
};

}  // namespace aiscale::act
