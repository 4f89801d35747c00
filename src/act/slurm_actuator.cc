#include "act/slurm_actuator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "act/process.h"
#include "core/bounded_file.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;
constexpr Duration kProbeTimeout = Seconds(1);

// Job ids compare as numbers ("9" < "10").
bool IdLess(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

std::string FileName(std::string s) {
  std::replace(s.begin(), s.end(), '/', '_');
  return s;
}

}  // namespace

Status CheckSlurmCommands(const std::string& path) {
  for (const char* cmd : {"squeue", "sinfo", "sbatch", "scancel"}) {
    Result<std::string> exe = ResolveExecutable(cmd, ".", path);
    if (!exe.ok()) {
      return exe.status().Wrap(std::string("the slurm engine needs the Slurm command ") + cmd +
                               " on PATH");
    }
  }
  return Status::Ok();
}

Result<TargetSpec> ParseSlurmTarget(const config::ConfigNode& node) {
  const size_t before = node.errors()->size();
  SlurmTargetConfig cfg = SlurmTargetConfig::Parse(node);
  if (node.errors()->size() > before) return Status::Invalid("see config errors");
  TargetSpec t{"slurm", nullptr, std::nullopt};
  t.make = [cfg](const WorkloadRef& ref, int initial,
                 const BuildEnv& env) -> Result<std::unique_ptr<Actuator>> {
    if (!env.clock || !env.http) {
      return Status::Internal("slurm target of " + ref.Key() + " needs a clock and HTTP client");
    }
    const char* path = std::getenv("PATH");
    RETURN_IF_ERROR(CheckSlurmCommands(path ? path : "").Wrap("unable to start " + ref.Key()));
    SlurmTargetConfig c = cfg;
    if (c.run_dir.empty() && !env.run_dir.empty()) c.run_dir = env.run_dir + "/slurm";
    auto a = std::make_unique<SlurmActuator>(ref, c, std::make_shared<SubprocessRunner>(),
                                             *env.clock, *env.http, initial);
    RETURN_IF_ERROR(a->Start().Wrap("unable to start Slurm jobs of " + ref.Key()));
    return std::unique_ptr<Actuator>(std::move(a));
  };
  return t;
}

SlurmActuator::SlurmActuator(WorkloadRef ref, SlurmTargetConfig cfg,
                             std::shared_ptr<CommandRunner> runner, Clock& clock, HttpClient& http,
                             int initial_replicas)
    : ref_(std::move(ref)),
      cfg_(std::move(cfg)),
      runner_(std::move(runner)),
      cli_(*runner_, SlurmCliOptions{cfg_.slurm_conf, cfg_.command_timeout, true}),
      clock_(clock),
      http_(http),
      initial_replicas_(initial_replicas) {
  if (cfg_.job_name.empty()) cfg_.job_name = "aiscale-" + ref_.name;
  if (cfg_.run_dir.empty()) cfg_.run_dir = DefaultRunDir() + "/slurm";
}

SlurmActuator::~SlurmActuator() { Shutdown(); }

std::string SlurmActuator::ScriptPath(int index) const {
  return cfg_.run_dir + "/" + FileName(ref_.Key()) + "-" + std::to_string(index) + ".sbatch";
}

Status SlurmActuator::Start(bool poll) {
  if (initial_replicas_ < 0) return Status::Invalid("initial replicas must be >= 0");
  Result<std::string> script = ReadBoundedFile(cfg_.script, kConfigFileLimit);
  if (!script.ok()) return script.status().Wrap("batch script");
  // Without a host replica every agent would render is_host=0 and none would serve the store.
  if (cfg_.rendezvous_host_replica < 0 && script->find("{rdzv_is_host}") != std::string::npos) {
    return Status::Invalid("batch script " + cfg_.script +
                           " uses {rdzv_is_host} but rendezvous_host_replica is not set");
  }
  std::error_code ec;
  fs::create_directories(cfg_.run_dir, ec);
  const std::string probe = cfg_.run_dir + "/.aiscale-write-test-" + std::to_string(getpid());
  std::ofstream out(probe);
  if (!out || !(out << "ok") || !out.flush()) {
    return Status::PermissionDenied("directory " + cfg_.run_dir + " is not writable");
  }
  out.close();
  std::remove(probe.c_str());
  {
    std::lock_guard<std::mutex> lock(mu_);
    desired_ = initial_replicas_;
  }
  (void)Sync();  // a down slurmctld shows in Observe, not here
  if (poll) poller_ = std::thread([this] { PollLoop(); });
  return Status::Ok();
}

void SlurmActuator::PollLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_) {
    wake_.wait_for(lock, cfg_.poll_interval);
    if (shutting_down_) break;
    lock.unlock();
    (void)Sync();
    lock.lock();
  }
}

// ---- Poll: squeue, sinfo, readiness ----

Result<SlurmActuator::Snapshot> SlurmActuator::Poll() {
  ASSIGN_OR_RETURN(std::vector<SlurmJob> jobs, cli_.Jobs());
  Snapshot s;
  std::map<std::string, std::string> address;  // node name -> NodeAddr
  Result<std::vector<SlurmNode>> nodes = cli_.Nodes(cfg_.partition);
  if (nodes.ok()) {
    s.idle_nodes = CountIdleNodes(*nodes, cfg_.partition);
    for (const SlurmNode& n : *nodes) address[n.name] = n.address.empty() ? n.name : n.address;
  } else {
    s.capacity_error = nodes.status().message();
  }
  for (SlurmJob& job : jobs) {
    if (job.name != cfg_.job_name) continue;
    std::optional<int> index = ParseJobTag(job.comment, ref_.Key());
    if (!index) continue;
    if (job.state == "COMPLETED") s.completed_ids.push_back(job.id);
    if (!JobIsActive(job)) continue;
    Replica r{*index, std::move(job), "", false};
    if (JobIsRunning(r.job)) {
      auto it = address.find(r.job.nodes);
      r.host = it != address.end() ? it->second : r.job.nodes;
    }
    s.replicas.push_back(std::move(r));
  }
  Probe(s.replicas);
  return s;
}

void SlurmActuator::Probe(std::vector<Replica>& replicas) {
  for (Replica& r : replicas) {
    if (!JobIsRunning(r.job)) continue;
    if (cfg_.readiness.kind != LocalReadiness::Kind::kHttp) {
      r.ready = true;
      continue;
    }
    HttpRequest req;
    req.url =
        "http://" + r.host + ":" + std::to_string(cfg_.PortFor(r.index)) + cfg_.readiness.http_path;
    req.timeout = kProbeTimeout;
    req.max_body_bytes = 64 * 1024;
    Result<HttpResponse> resp = http_.Send(req);
    r.ready = resp.ok() && resp->status >= 200 && resp->status < 300;
  }
}

// ---- Reconcile ----

Status SlurmActuator::Sync() {
  std::lock_guard<std::mutex> sync(sync_mu_);
  Result<Snapshot> polled = Poll();
  std::vector<Replica> stop;
  std::vector<int> submit;
  std::vector<std::thread> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    JoinDoneStoppersLocked(finished);
    if (!polled.ok()) {
      last_status_ =
          polled.status().Wrap("unable to read the Slurm queue for " + ref_.Key() +
                               (polled.status().IsUnavailable() ? " (Slurm unavailable)" : ""));
    } else {
      Snapshot s = std::move(polled).value();
      // A job being stopped is no longer part of the workload; once it left the queue and
      // its stopper is done, forget it.
      std::set<std::string> still;
      for (const Replica& r : s.replicas) still.insert(r.job.id);
      for (auto it = stopping_.begin(); it != stopping_.end();) {
        const bool running_stop = std::any_of(stoppers_.begin(), stoppers_.end(),
                                              [&](const Stopper& st) { return st.job_id == *it; });
        it = (!still.count(*it) && !running_stop) ? stopping_.erase(it) : std::next(it);
      }
      std::erase_if(s.replicas, [&](const Replica& r) { return stopping_.count(r.job.id) > 0; });
      NoteCompletionsLocked(s);
      for (const Replica& old : snap_.replicas) {
        const bool gone = std::none_of(s.replicas.begin(), s.replicas.end(),
                                       [&](const Replica& r) { return r.job.id == old.job.id; });
        if (gone && old.index < desired_ && !job_done_) {
          last_event_ = "replica " + std::to_string(old.index) + " (job " + old.job.id +
                        ") left the queue; resubmitting";
        }
      }
      snap_ = std::move(s);
      last_status_ = Status::Ok();
      if (!shutting_down_) PlanLocked(stop, submit);
      for (const Replica& r : stop) LaunchStopLocked(r);
    }
  }
  for (std::thread& t : finished) t.join();
  if (!polled.ok()) return polled.status();
  Status result;
  for (int index : submit) {
    Status st = Submit(index);
    if (!st.ok() && result.ok()) result = st;
  }
  return result;
}

void SlurmActuator::NoteCompletionsLocked(const Snapshot& s) {
  for (const Replica& r : s.replicas) seen_active_.insert(r.job.id);
  if (cfg_.restart_policy != RestartPolicy::kOnFailure) return;
  for (const std::string& id : s.completed_ids) {
    // Only a job this actuator saw run: a COMPLETED one of an earlier run (Slurm lists ended
    // jobs for MinJobAge) says nothing about this one.
    if (!seen_active_.count(id) || job_done_) continue;
    job_done_ = true;
    last_event_ = "job " + id + " COMPLETED (exit 0): the job finished; nothing is resubmitted";
  }
}

void SlurmActuator::PlanLocked(std::vector<Replica>& stop, std::vector<int>& submit) {
  // Keep the oldest job of each index; order the rest for stopping: duplicates, then pending
  // jobs (they serve nobody yet), then the highest index, the rendezvous host last of all.
  std::vector<Replica> keep = snap_.replicas;
  std::sort(keep.begin(), keep.end(), [](const Replica& a, const Replica& b) {
    return a.index != b.index ? a.index < b.index : IdLess(a.job.id, b.job.id);
  });
  std::vector<Replica> unique;
  for (Replica& r : keep) {
    if (!unique.empty() && unique.back().index == r.index) {
      stop.push_back(r);
    } else {
      unique.push_back(r);
    }
  }
  // The rendezvous host goes last: the other agents' store lives in it.
  std::stable_sort(unique.begin(), unique.end(), [this](const Replica& a, const Replica& b) {
    const bool ha = cfg_.IsHost(a.index), hb = cfg_.IsHost(b.index);
    if (ha != hb) return hb;
    const bool pa = !JobIsRunning(a.job), pb = !JobIsRunning(b.job);
    return pa != pb ? pa : a.index > b.index;
  });
  const int excess = static_cast<int>(unique.size()) - desired_;
  for (int i = 0; i < excess; ++i) stop.push_back(unique[i]);
  if (excess >= 0 || job_done_) return;  // a finished job is never submitted again
  std::set<int> used;
  for (const Replica& r : unique) used.insert(r.index);
  for (int index = 0; static_cast<int>(submit.size()) < -excess; ++index) {
    if (!used.count(index)) submit.push_back(index);
  }
}

Status SlurmActuator::Submit(int index) {
  Result<std::string> text = ReadBoundedFile(cfg_.script, kConfigFileLimit);
  if (!text.ok()) return text.status().Wrap("batch script");
  const std::string path = ScriptPath(index);
  {
    std::ofstream out(path, std::ios::trunc);
    out << cfg_.Substitute(*text, ref_.Key(), index);
    if (!out.flush()) return Status::PermissionDenied("unable to write " + path);
  }
  std::vector<std::string> args = cfg_.sbatch_args;
  for (const std::string& a : std::vector<std::string>{
           "--job-name=" + cfg_.job_name, "--comment=" + JobTag(ref_.Key(), index), "--nodes=1"}) {
    args.push_back(a);
  }
  if (cfg_.exclusive) args.push_back("--exclusive");
  if (!cfg_.partition.empty()) args.push_back("--partition=" + cfg_.partition);
  Result<std::string> id = cli_.Submit(args, path);
  std::lock_guard<std::mutex> lock(mu_);
  if (!id.ok()) {
    last_event_ = "sbatch failed for replica " + std::to_string(index) + " (script " + cfg_.script +
                  "): " + id.status().message();
    return id.status().Wrap("unable to submit replica " + std::to_string(index) + " of " +
                            ref_.Key() + " from " + cfg_.script);
  }
  seen_active_.insert(*id);
  // Until the next poll shows it, the new job counts as pending.
  snap_.replicas.push_back(
      Replica{index, SlurmJob{*id, cfg_.job_name, "PENDING", "", JobTag(ref_.Key(), index), ""}, "",
              false});
  return Status::Ok();
}

// ---- Scale-down ----

void SlurmActuator::LaunchStopLocked(const Replica& r) {
  stopping_.insert(r.job.id);
  std::erase_if(snap_.replicas, [&](const Replica& x) { return x.job.id == r.job.id; });
  Stopper& st = stoppers_.emplace_back();
  st.job_id = r.job.id;
  st.thread = std::thread([this, r] { StopJob(r); });
}

void SlurmActuator::StopJob(Replica r) {
  if (JobIsRunning(r.job)) {
    RunPreStop(r);
    (void)cli_.Cancel(r.job.id, "TERM");
    // Shutdown does not cut the grace short: the job must get its time to drain.
    const TimePoint end = clock_.Now() + cfg_.grace_period;
    while (clock_.Now() < end) {
      clock_.SleepUntil(std::min(end, clock_.Now() + Seconds(0.2)));
      Result<std::vector<SlurmJob>> jobs = cli_.Jobs();
      if (jobs.ok() && std::none_of(jobs->begin(), jobs->end(), [&](const SlurmJob& j) {
            return j.id == r.job.id && JobIsActive(j);
          })) {
        break;  // exited on SIGTERM
      }
    }
  }
  (void)cli_.Cancel(r.job.id, "");
  std::lock_guard<std::mutex> lock(mu_);
  for (Stopper& st : stoppers_) {
    if (st.job_id == r.job.id) st.done = true;
  }
  wake_.notify_all();
}

void SlurmActuator::RunPreStop(const Replica& r) {
  const LocalPreStop& p = cfg_.pre_stop;
  if (p.kind == LocalPreStop::Kind::kHttp) {
    HttpRequest req;
    req.method = p.method;
    req.url = "http://" + r.host + ":" + std::to_string(cfg_.PortFor(r.index)) + p.http_path;
    req.timeout = p.timeout;
    (void)http_.Send(req);
  } else if (p.kind == LocalPreStop::Kind::kCommand) {
    std::vector<std::string> argv;
    for (const std::string& a : p.command) {
      argv.push_back(cfg_.Substitute(a, ref_.Key(), r.index, r.host));
    }
    (void)runner_->Run(argv, {}, p.timeout);
  }
}

void SlurmActuator::JoinDoneStoppersLocked(std::vector<std::thread>& out) {
  for (auto it = stoppers_.begin(); it != stoppers_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    out.push_back(std::move(it->thread));
    it = stoppers_.erase(it);
  }
}

void SlurmActuator::WaitForStops() {
  std::vector<std::thread> threads;
  {
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait(lock, [&] {
      return std::all_of(stoppers_.begin(), stoppers_.end(),
                         [](const Stopper& s) { return s.done; });
    });
    JoinDoneStoppersLocked(threads);
  }
  for (std::thread& t : threads) t.join();
}

// ---- The Actuator interface ----

Result<ScaleState> SlurmActuator::Observe(const WorkloadRef& ref) {
  if (ref.Key() != ref_.Key()) return Status::NotFound("slurm actuator does not run " + ref.Key());
  std::lock_guard<std::mutex> lock(mu_);
  if (!last_status_.ok()) return last_status_;
  ScaleState s;
  int running = 0;
  for (const Replica& r : snap_.replicas) {
    ++s.current;
    running += JobIsRunning(r.job);
    s.ready += r.ready;
  }
  if (snap_.idle_nodes) s.max_available = running + *snap_.idle_nodes;
  s.completed = job_done_;
  if (s.completed) s.current = desired_;  // what was asked for: the Decision holds there
  s.detail = DetailLocked();
  return s;
}

std::string SlurmActuator::DetailLocked() const {
  std::vector<std::string> parts;
  int running = 0, pending = 0;
  std::string pending_reason;
  for (const Replica& r : snap_.replicas) {
    if (JobIsRunning(r.job)) {
      ++running;
      if (!r.ready) {
        parts.push_back("replica " + std::to_string(r.index) + " (job " + r.job.id + " on " +
                        r.job.nodes + ") not ready yet");
      }
    } else {
      ++pending;
      if (!r.job.reason.empty() && r.job.reason != "None") pending_reason = r.job.reason;
    }
  }
  if (pending > 0) {
    parts.push_back(std::to_string(pending) + " job(s) pending" +
                    (pending_reason.empty() ? "" : " (" + pending_reason + ")"));
  }
  if (snap_.idle_nodes) {
    // Said whenever the engine has no room left, so a Decision capped by max_available (or a
    // request the constraints did not cap) carries the engine's reason.
    const int max = running + *snap_.idle_nodes;
    if (desired_ > max || *snap_.idle_nodes == 0) {
      const std::string part = cfg_.partition.empty() ? "(default)" : cfg_.partition;
      parts.push_back((desired_ > max ? "capped at " + std::to_string(max) + ": " : "") +
                      "partition " + part + " has " + std::to_string(*snap_.idle_nodes) +
                      " idle node(s), so at most " + std::to_string(max) +
                      " replica(s) fit (one job per node)");
    }
  } else if (!snap_.capacity_error.empty()) {
    parts.push_back("capacity unknown: " + snap_.capacity_error);
  }
  if (!stopping_.empty()) parts.push_back(std::to_string(stopping_.size()) + " job(s) stopping");
  if (!last_event_.empty()) parts.push_back(last_event_);
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

Status SlurmActuator::Apply(const WorkloadRef& ref, int desired) {
  if (ref.Key() != ref_.Key()) return Status::NotFound("slurm actuator does not run " + ref.Key());
  if (desired < 0) return Status::Invalid("desired replicas must be >= 0");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutting_down_) return Status::Unavailable("slurm actuator is shut down");
    if (desired != desired_) last_event_.clear();
    desired_ = desired;
  }
  return Sync();
}

Result<std::vector<ReplicaEndpoint>> SlurmActuator::Endpoints(const WorkloadRef& ref) {
  if (ref.Key() != ref_.Key()) return Status::NotFound("slurm actuator does not run " + ref.Key());
  std::lock_guard<std::mutex> lock(mu_);
  if (!last_status_.ok()) return last_status_;
  std::vector<ReplicaEndpoint> out;
  for (const Replica& r : snap_.replicas) {
    if (!JobIsRunning(r.job)) continue;
    out.push_back(
        {ref_.name + "-" + std::to_string(r.index), r.host, cfg_.PortFor(r.index), r.ready});
  }
  std::sort(out.begin(), out.end(),
            [](const ReplicaEndpoint& a, const ReplicaEndpoint& b) { return a.port < b.port; });
  return out;
}

void SlurmActuator::Shutdown() {
  std::lock_guard<std::mutex> serial(shutdown_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
  }
  wake_.notify_all();
  if (poller_.joinable()) poller_.join();
  WaitForStops();
}

}  // namespace aiscale::act
