#include "act/local_actuator.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "act/process.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;
constexpr Duration kLeftoverWait = Seconds(5);

std::string EnvPath(const LocalTargetConfig& cfg) {
  for (const auto& [k, v] : cfg.env) {
    if (k == "PATH") return v;
  }
  const char* p = std::getenv("PATH");
  return p ? p : "";
}

}  // namespace

LocalActuator::LocalActuator(WorkloadRef ref, LocalTargetConfig cfg, Clock& clock, HttpClient& http,
                             int initial_replicas)
    : ref_(std::move(ref)),
      cfg_(std::move(cfg)),
      clock_(clock),
      http_(http),
      initial_replicas_(initial_replicas) {
  if (cfg_.run_dir.empty()) cfg_.run_dir = DefaultRunDir();
  if (cfg_.log_dir.empty()) cfg_.log_dir = cfg_.run_dir;
  if (cfg_.workdir.empty()) {
    std::error_code ec;
    cfg_.workdir = fs::current_path(ec).string();
  }
}

LocalActuator::~LocalActuator() { Shutdown(); }

// "8 s", "0.4 s": whole seconds from 10 s up.
std::string LocalActuator::FormatSeconds(Duration d) {
  const double s = std::max(0.0, ToSeconds(d));
  char buf[32];
  if (s >= 10 || s == std::floor(s)) {
    std::snprintf(buf, sizeof buf, "%.0f s", std::round(s));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  }
  return buf;
}

std::string LocalActuator::WorkloadFileName() const {
  std::string name = ref_.Key();
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

std::string LocalActuator::LogPath(int replica) const {
  return cfg_.log_dir + "/" + WorkloadFileName() + "-" + std::to_string(replica) + ".log";
}

std::string LocalActuator::RecordPath(int replica) const {
  return cfg_.run_dir + "/" + WorkloadFileName() + "-" + std::to_string(replica) + ".pid";
}

// ---- Start and the checks it makes ----

Status LocalActuator::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutting_down_)
      return Status::Unavailable("local actuator for " + ref_.Key() + " is shut down");
    if (started_) return Status::Conflict("local actuator for " + ref_.Key() + " already started");
  }
  RETURN_IF_ERROR(
      CheckStartable(initial_replicas_).Wrap("unable to start local workload " + ref_.Key()));
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;
    desired_ = initial_replicas_;
  }
  supervisor_ = std::thread([this] { SupervisorLoop(); });
  return Status::Ok();
}

void LocalActuator::UseGpuSlots(std::shared_ptr<GpuSlots> slots, int per_replica) {
  std::lock_guard<std::mutex> lock(mu_);
  slots_ = std::move(slots);
  gpus_per_replica_ = slots_ ? std::max(1, per_replica) : 0;
}

std::string LocalActuator::Holder(int index) const {
  return ref_.Key() + "-" + std::to_string(index);
}

Status LocalActuator::CheckStartable(int initial) {
  if (initial < 0) return Status::Invalid("initial replicas must be >= 0");
  if (cfg_.command.empty()) return Status::Invalid("no command");
  if (!slots_ && cfg_.UsesGpus()) {
    return Status::Invalid(
        "the target uses {gpus} but the workload is in no pool of GPU slots (give spec.pool a "
        "size: the local engine's slot count)");
  }
  if (slots_ && gpus_per_replica_ > slots_->count()) {
    return Status::Invalid("a replica needs " + std::to_string(gpus_per_replica_) +
                           " GPU slots but the pool has " + std::to_string(slots_->count()));
  }
  std::error_code ec;
  if (!fs::is_directory(cfg_.workdir, ec)) {
    return Status::NotFound("workdir " + cfg_.workdir + " is not a directory");
  }
  const std::string path = EnvPath(cfg_);
  const std::string program = cfg_.ProgramFor(0);  // empty: a shell line we cannot check
  Result<std::string> exe =
      ResolveExecutable(program.empty() ? cfg_.ArgvFor(0)[0] : program, cfg_.workdir, path);
  if (!exe.ok()) return exe.status();
  if (!cfg_.pre_stop.command.empty()) {
    Result<std::string> hook =
        ResolveExecutable(cfg_.Substitute(cfg_.pre_stop.command[0], 0), cfg_.workdir, path);
    if (!hook.ok()) return hook.status().Wrap("pre_stop");
  }
  for (const std::string& dir : {cfg_.run_dir, cfg_.log_dir}) {
    fs::create_directories(dir, ec);
    const std::string probe = dir + "/.aiscale-write-test-" + std::to_string(getpid());
    std::ofstream out(probe);
    if (!out || !(out << "ok") || !out.flush()) {
      return Status::PermissionDenied("directory " + dir + " is not writable");
    }
    out.close();
    std::remove(probe.c_str());
  }
  RETURN_IF_ERROR(KillLeftovers());
  for (int i = 0; i < initial; ++i) {
    const int port = cfg_.PortFor(i);
    if (port > 65535) return Status::Invalid("port " + std::to_string(port) + " is out of range");
    if (port > 0 && !WaitPortFree(port, kLeftoverWait, clock_)) {
      return Status::Unavailable("port " + std::to_string(port) + " (replica " + std::to_string(i) +
                                 ") is still in use by another process after 5 s");
    }
  }
  return Status::Ok();
}

// Kills the process groups a previous aiscale recorded for this workload and did not stop.
Status LocalActuator::KillLeftovers() {
  const std::string prefix = WorkloadFileName() + "-";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(cfg_.run_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || e.path().extension() != ".pid") continue;
    Result<RunRecord> rec = ReadRunRecord(e.path().string());
    if (rec.ok()) KillLeftoverGroup(*rec, kLeftoverWait, clock_);
    fs::remove(e.path(), ec);
  }
  if (ec)
    return Status::PermissionDenied("unable to read run dir " + cfg_.run_dir + ": " + ec.message());
  return Status::Ok();
}

// ---- The controller's side: no I/O, only the table ----

Result<ScaleState> LocalActuator::Observe(const WorkloadRef& ref) {
  if (ref.Key() != ref_.Key()) {
    return Status::NotFound("local actuator for " + ref_.Key() + " does not run " + ref.Key());
  }
  std::lock_guard<std::mutex> lock(mu_);
  ScaleState s;
  s.current = desired_;
  s.asleep = asleep_desired_;
  int seen = 0;
  // Only the lowest `desired_` replicas serve; the next `asleep_desired_` are the warm tier, and
  // the rest are about to be stopped.
  for (const auto& [index, r] : replicas_) {
    const int rank = seen++;
    if (rank >= desired_) {
      if (rank < desired_ + asleep_desired_ && r.pid != 0 && r.asleep) ++s.asleep_ready;
      continue;
    }
    if (r.pid != 0 && r.ready && !r.asleep) ++s.ready;
  }
  s.completed = job_done_;
  if (s.ready < s.current || job_done_) s.detail = DetailLocked(clock_.Now());
  return s;
}

Status LocalActuator::Apply(const WorkloadRef& ref, int desired) {
  if (ref.Key() != ref_.Key()) {
    return Status::NotFound("local actuator for " + ref_.Key() + " does not run " + ref.Key());
  }
  return SetSizes(ref, desired, 0);
}

Status LocalActuator::SetSizes(const WorkloadRef& ref, int awake, int asleep) {
  if (awake < 0 || asleep < 0) {
    return Status::Invalid("unable to scale " + ref.Key() + " to a negative count");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutting_down_) {
      return Status::Unavailable("unable to scale " + ref.Key() + ": the actuator is shut down");
    }
    desired_ = awake;
    asleep_desired_ = asleep;
    wake_pending_ = true;
  }
  wake_.notify_all();
  return Status::Ok();
}

Status LocalActuator::ApplyTiers(const WorkloadRef& ref, int awake, int asleep) {
  if (asleep == 0 || ref.Key() != ref_.Key()) return Apply(ref, awake);
  if (!cfg_.warm_tier.on) {
    return Status::Invalid("the local target of " + ref.Key() +
                           " has no warm_tier (sleep and wake calls): it cannot keep replicas "
                           "asleep");
  }
  return SetSizes(ref, awake, asleep);
}

Result<std::vector<ReplicaEndpoint>> LocalActuator::Endpoints(const WorkloadRef& ref) {
  if (ref.Key() != ref_.Key()) {
    return Status::NotFound("local actuator for " + ref_.Key() + " does not run " + ref.Key());
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ReplicaEndpoint> out;
  int seen = 0;
  for (const auto& [index, r] : replicas_) {
    if (seen++ >= desired_) break;
    if (r.pid == 0) continue;
    out.push_back({ref_.name + "-" + std::to_string(index), "127.0.0.1", cfg_.PortFor(index),
                   r.ready && !r.asleep});
  }
  return out;
}

std::vector<pid_t> LocalActuator::Pids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<pid_t> out;
  for (const auto& [index, r] : replicas_) {
    if (r.pid != 0) out.push_back(r.pid);
  }
  for (const Stopper& s : stoppers_) {
    if (!s.done) out.push_back(s.pid);
  }
  return out;
}

std::string LocalActuator::DetailLocked(TimePoint now) const {
  std::vector<std::string> parts;
  int seen = 0;
  for (const auto& [index, r] : replicas_) {
    if (seen++ >= desired_) break;
    const std::string name = "replica " + std::to_string(index);
    if (r.pid != 0 && r.ready && !job_done_) continue;
    if (r.pid != 0 && job_done_) {
      parts.push_back(name + " still running: the job finished, it is left to exit");
    } else if (r.completed) {
      parts.push_back(name + " exited 0: the job finished");
    } else if (job_done_ && r.pid == 0) {
      parts.push_back(name + " not started again: the job finished");
    } else if (r.pid == 0 && !r.pending.empty()) {
      parts.push_back(r.pending);
    } else if (r.pid == 0 && !r.last_error.empty()) {
      std::string p = r.last_error;
      if (r.failures > 1) p += " (" + std::to_string(r.failures) + " times in a row)";
      parts.push_back(p + "; next start in " + FormatSeconds(r.next_start - now));
    } else if (r.pid == 0) {
      parts.push_back(name + " starting");
    } else {
      std::string p =
          name + " not ready yet (started " + FormatSeconds(now - r.started_at) + " ago)";
      if (!r.last_error.empty()) p += "; before: " + r.last_error;
      parts.push_back(p);
    }
  }
  if (seen < desired_) parts.push_back(std::to_string(desired_ - seen) + " replica(s) to start");
  const auto stopping =
      std::count_if(stoppers_.begin(), stoppers_.end(), [](const Stopper& s) { return !s.done; });
  if (stopping > 0) parts.push_back(std::to_string(stopping) + " replica(s) stopping");
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// ---- Shutdown ----

void LocalActuator::Shutdown() {
  std::lock_guard<std::mutex> serial(shutdown_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    wake_pending_ = true;
  }
  wake_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
}

}  // namespace aiscale::act
