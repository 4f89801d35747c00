// LocalActuator's supervisor thread: reaps exits, probes readiness, enforces ready_timeout,
// (re)starts replicas with backoff and hands scale-downs to stopper threads. Each step copies
// what it needs from the table under mu_, does its I/O unlocked, then writes back under mu_;
// only this thread changes which process a replica runs, so the write-back checks the pid.
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "act/local_actuator.h"
#include "act/process.h"

namespace aiscale::act {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTickInterval(100);
constexpr milliseconds kProbeInterval(500);
constexpr milliseconds kProbeTimeout(1000);
// A replica ready and up this long has recovered: its crash count starts again from zero (as
// a kubelet resets its restart backoff), so one that dies right after an immediate readiness
// keeps backing off.
constexpr Duration kStableAfter = Seconds(10);

}  // namespace

void LocalActuator::SupervisorLoop() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (shutting_down_) break;
    }
    Tick();
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, kTickInterval, [this] { return wake_pending_ || shutting_down_; });
    wake_pending_ = false;
  }
  // Stop everything from this thread: the replicas' death signal follows it, so it must
  // outlive them and their pre-stop hooks.
  {
    std::lock_guard<std::mutex> lock(mu_);
    desired_ = 0;
    asleep_desired_ = 0;
  }
  Reconcile();
  JoinFinishedStoppers(/*all=*/true);
  CollectTierCalls(/*all=*/true);  // their replicas are gone: the calls end with them
}

void LocalActuator::Tick() {
  ReapExits();
  EnforceReadyTimeout();
  Probe();
  Tiers();
  Reconcile();
  JoinFinishedStoppers(/*all=*/false);
}

void LocalActuator::RecordFailureLocked(Replica& r, std::string why, TimePoint now) {
  ++r.failures;
  r.last_error = std::move(why);
  r.ready = false;
  r.ever_ready = false;
  const double factor = std::pow(2.0, std::min(r.failures - 1, 30));
  const double delay =
      std::min(ToSeconds(cfg_.backoff_initial) * factor, ToSeconds(cfg_.backoff_max));
  r.next_start = now + Seconds(delay);
}

void LocalActuator::ReapExits() {
  std::vector<std::pair<int, pid_t>> running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [index, r] : replicas_) {
      if (r.pid != 0) running.emplace_back(index, r.pid);
    }
  }
  std::vector<std::tuple<int, pid_t, int>> exited;
  for (const auto& [index, pid] : running) {
    if (std::optional<int> status = TryReapGroup(pid)) {
      exited.emplace_back(index, pid, *status);
      std::remove(RecordPath(index).c_str());
    }
  }
  if (exited.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  for (const auto& [index, pid, status] : exited) {
    auto it = replicas_.find(index);
    if (it == replicas_.end() || it->second.pid != pid) continue;
    Replica& r = it->second;
    r.pid = 0;
    ReleaseGpus(index, r.gpus);  // the group is gone (TryReapGroup killed the rest)
    r.gpus.clear();
    if (cfg_.restart_policy == RestartPolicy::kOnFailure && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0) {
      // The job finished (local_target.h RestartPolicy): nothing is started again.
      r.completed = true;
      r.ready = false;
      job_done_ = true;
      continue;
    }
    RecordFailureLocked(r, "replica " + std::to_string(index) + " " + DescribeWaitStatus(status),
                        now);
  }
}

void LocalActuator::EnforceReadyTimeout() {
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  for (auto& [index, r] : replicas_) {
    if (r.pid == 0 || r.ever_ready || now - r.started_at < cfg_.ready_timeout) continue;
    const pid_t pid = r.pid;
    r.pid = 0;
    RecordFailureLocked(r,
                        "replica " + std::to_string(index) + " was not ready after " +
                            FormatSeconds(cfg_.ready_timeout) + " and was stopped",
                        now);
    LaunchStopLocked(index, pid, /*pre_stop=*/false, std::move(r.gpus));
    r.gpus.clear();
  }
}

bool LocalActuator::ProbeOne(ProbeJob& job) {
  switch (cfg_.readiness.kind) {
    case LocalReadiness::Kind::kNone:
      return true;
    case LocalReadiness::Kind::kHttp:
      return ProbeHttp(http_, cfg_.PortFor(job.index), cfg_.readiness.http_path, kProbeTimeout);
    case LocalReadiness::Kind::kLog:
      // Once the line was seen the replica stays ready for as long as it runs.
      return job.ever_ready || ScanLog(LogPath(job.index), cfg_.readiness.log_text, job.log);
  }
  return false;
}

void LocalActuator::Probe() {
  std::vector<ProbeJob> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = clock_.Now();
    for (auto& [index, r] : replicas_) {
      if (r.pid == 0 || now < r.next_probe) continue;
      r.next_probe = now + kProbeInterval;
      jobs.push_back({index, r.pid, r.ever_ready, r.log});
    }
  }
  std::vector<bool> ready;
  for (ProbeJob& job : jobs) ready.push_back(ProbeOne(job));
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto it = replicas_.find(jobs[i].index);
    if (it == replicas_.end() || it->second.pid != jobs[i].pid) continue;
    Replica& r = it->second;
    r.ready = ready[i];
    r.ever_ready = r.ever_ready || ready[i];
    r.log = std::move(jobs[i].log);
    if (r.ready && now - r.started_at >= kStableAfter) {
      r.failures = 0;
      r.last_error.clear();
    }
  }
}

bool LocalActuator::IndexBusyLocked(int index) const {
  return std::any_of(stoppers_.begin(), stoppers_.end(),
                     [index](const Stopper& s) { return s.index == index && !s.done; });
}

void LocalActuator::Reconcile() {
  std::vector<int> to_start;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = clock_.Now();
    const size_t want = static_cast<size_t>(std::max(0, desired_) + asleep_desired_);
    while (replicas_.size() > want) {  // scale down: the newest (highest index) first
      auto last = std::prev(replicas_.end());
      // torchrun: the agent hosting the rendezvous store goes last (the others need it).
      if (last->first == cfg_.rendezvous_host_replica && replicas_.size() > 1) --last;
      if (last->second.pid != 0) {
        LaunchStopLocked(last->first, last->second.pid, true, std::move(last->second.gpus));
      }
      replicas_.erase(last);
    }
    for (int i = 0; replicas_.size() < want; ++i) {  // scale up: the lowest free indices
      if (replicas_.count(i) || IndexBusyLocked(i)) continue;
      Replica r;
      r.index = i;
      r.next_start = now;
      replicas_.emplace(i, std::move(r));
    }
    for (const auto& [index, r] : replicas_) {
      if (job_done_) break;  // a finished job is never started again
      if (r.pid == 0 && now >= r.next_start && !IndexBusyLocked(index)) to_start.push_back(index);
    }
  }
  for (int index : to_start) StartReplica(index);
}

bool LocalActuator::TakeGpus(int index, std::vector<int>& gpus, std::string& pending) {
  if (!slots_) return true;
  std::vector<int> preferred;
  {
    std::lock_guard<std::mutex> lock(mu_);
    preferred = replicas_[index].last_gpus;
  }
  std::optional<std::vector<int>> got =
      slots_->Acquire(Holder(index), gpus_per_replica_, preferred);
  if (got) {
    gpus = std::move(*got);
    return true;
  }
  pending = "replica " + std::to_string(index) + " pending: needs " +
            std::to_string(gpus_per_replica_) + " GPU slot(s); " + slots_->Describe();
  return false;
}

void LocalActuator::ReleaseGpus(int index, const std::vector<int>& gpus) {
  if (slots_ && !gpus.empty()) slots_->Release(Holder(index), gpus);
}

void LocalActuator::StartReplica(int index) {
  const int port = cfg_.PortFor(index);
  const std::string name = "replica " + std::to_string(index);
  std::string error, pending;
  std::vector<int> gpus;
  pid_t pid = 0;
  const int64_t log_start = FileSize(LogPath(index));
  if (port > 65535) {
    error = name + ": port " + std::to_string(port) + " is out of range";
  } else if (port > 0 && PortInUse(port)) {
    error = name + ": port " + std::to_string(port) + " is already in use by another process";
  } else if (TakeGpus(index, gpus, pending)) {
    const std::string ids = FormatSlotIds(gpus);
    SpawnOptions o{cfg_.ArgvFor(index, ids), cfg_.workdir, cfg_.EnvFor(index, ids), LogPath(index)};
    const bool own = std::any_of(o.env.begin(), o.env.end(),
                                 [](const auto& kv) { return kv.first == "CUDA_VISIBLE_DEVICES"; });
    if (slots_ && !own) o.env.emplace_back("CUDA_VISIBLE_DEVICES", ids);
    Result<pid_t> spawned = SpawnGroup(o);
    if (spawned.ok()) {
      pid = *spawned;
      const std::optional<ProcStat> stat = ReadProcStat(pid);
      // A missing record only weakens cleanup after a crash of aiscale itself.
      (void)WriteRunRecord(RecordPath(index), {pid, pid, stat ? stat->start_ticks : 0});
    } else {
      error = name + " could not start: " + spawned.status().message();
      ReleaseGpus(index, gpus);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  Replica& r = replicas_[index];  // only this thread erases replicas, so it is still there
  r.index = index;
  r.pending = pending;
  if (!pending.empty()) return;  // not a failure: it starts once slots are free (next tick)
  if (pid == 0) {
    RecordFailureLocked(r, error, now);
    return;
  }
  r.gpus = gpus;
  r.last_gpus = std::move(gpus);
  const bool immediate = cfg_.readiness.kind == LocalReadiness::Kind::kNone;
  r.pid = pid;
  r.started_at = now;
  r.asleep = false;     // a new process starts awake
  r.tier_call = false;  // a call to the process before it is not this one's
  r.ready = immediate;
  r.ever_ready = immediate;
  r.log = LogScan{log_start, ""};
  r.next_probe = now;
}

// ---- Stopping ----

void LocalActuator::LaunchStopLocked(int index, pid_t pid, bool pre_stop, std::vector<int> gpus) {
  Stopper& s = stoppers_.emplace_back();
  s.index = index;
  s.pid = pid;
  s.gpus = std::move(gpus);
  s.thread = std::thread([this, &s, index, pid, pre_stop] {
    StopReplica(index, pid, pre_stop, FormatSlotIds(s.gpus));
    ReleaseGpus(index, s.gpus);  // after the pre-stop hook and the exit, not before
    {
      std::lock_guard<std::mutex> lock(mu_);
      s.done = true;
      wake_pending_ = true;
    }
    wake_.notify_all();
  });
}

void LocalActuator::StopReplica(int index, pid_t pid, bool pre_stop, const std::string& gpus) {
  if (pre_stop) RunPreStop(index, gpus);
  TerminateGroup(pid, cfg_.grace_period, clock_);
  std::remove(RecordPath(index).c_str());
}

void LocalActuator::RunPreStop(int index, const std::string& gpus) {
  const LocalPreStop& hook = cfg_.pre_stop;
  if (hook.kind == LocalPreStop::Kind::kHttp) {
    HttpRequest req;
    req.method = hook.method;
    req.url = "http://127.0.0.1:" + std::to_string(cfg_.PortFor(index)) + hook.http_path;
    req.timeout = hook.timeout;
    (void)http_.Send(req);  // success, failure or timeout: SIGTERM comes next either way
  } else if (hook.kind == LocalPreStop::Kind::kCommand) {
    std::vector<std::string> argv;
    for (const std::string& a : hook.command) argv.push_back(cfg_.Substitute(a, index, gpus));
    Result<pid_t> pid = SpawnGroup({argv, cfg_.workdir, cfg_.EnvFor(index, gpus), LogPath(index)});
    if (pid.ok()) WaitOrKillGroup(*pid, hook.timeout, clock_);
  }
}

void LocalActuator::JoinFinishedStoppers(bool all) { JoinFinished(stoppers_, all); }

}  // namespace aiscale::act
