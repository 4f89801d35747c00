#include "cli/daemon.h"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "act/kubernetes_pool_source.h"
#include "act/slurm_pool_source.h"
#include "control/assembler.h"
#include "store/sqlite_store.h"

namespace aiscale::cli {

Daemon::Daemon(ControllerConfig cfg, DaemonOptions opt, std::ostream& log)
    : cfg_(std::move(cfg)), opt_(opt), log_(log) {}

Daemon::~Daemon() { Shutdown(); }

Result<std::unique_ptr<Daemon>> Daemon::Build(ControllerConfig cfg, DaemonOptions opt,
                                              std::ostream& log) {
  for (const WorkloadSpec& w : cfg.workloads) {
    if (!w.target) {
      return Status::Invalid("workload " + w.ref.Key() +
                             " has no target: `aiscale run` needs to know which engine runs it "
                             "(target: {engine: local, ...})");
    }
  }
  std::unique_ptr<Daemon> d(new Daemon(std::move(cfg), opt, log));
  if (!d->cfg_.file.empty()) {
    config::ConfigErrors errors;  // the file parsed before Build; kept to compare reloads with
    d->running_parts_ = RestartPartsOf(config::LoadConfigFile(d->cfg_.file, errors));
  }
  RETURN_IF_ERROR(d->OpenStore());
  RETURN_IF_ERROR(d->MakeActuators());
  RETURN_IF_ERROR(d->MakeSources());
  RETURN_IF_ERROR(d->AddWorkloads());
  RETURN_IF_ERROR(d->MakeElector());
  RETURN_IF_ERROR(d->MakeAiScalers());
  RETURN_IF_ERROR(d->StartServer());
  return d;
}

Status Daemon::OpenStore() {
  if (cfg_.store_path.empty()) return Status::Ok();
  std::error_code ec;
  const auto dir = std::filesystem::path(cfg_.store_path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  // One daemon per store: a second one on it would apply its own decisions beside the first's.
  if (cfg_.store_path[0] != ':' && cfg_.store_path.rfind("file:", 0) != 0) {
    auto lock = store::StoreLock::Acquire(cfg_.store_path);
    if (!lock.ok()) return lock.status();
    store_lock_ = std::move(lock).value();
  }
  auto s = store::SqliteStore::Open(cfg_.store_path, cfg_.store_options);
  if (!s.ok()) return s.status().Wrap("unable to open store " + cfg_.store_path);
  if (const std::string why = (*s)->Stats().checkpoint_error; !why.empty()) {
    log_ << "aiscale: warning: store " << cfg_.store_path
         << ": WAL checkpoints run inside the commits instead (" << why << ")\n";
  }
  store_ = std::move(s).value();
  return Status::Ok();
}

// The size a workload's engine should hold until the first decision: what the last recorded
// decision left it at (so a restart neither doubles nor drops replicas), else min_replicas.
// A corrupt newest decision is skipped (Store::Recent), so the size is the newest readable one.
int Daemon::InitialReplicas(const WorkloadSpec& w) const {
  int n = std::max(w.min_replicas, 1);
  if (!store_) return n;
  auto recent = store_->Recent(w.ref.Key(), 1);
  if (!recent.ok()) {
    log_ << "aiscale: warning: " << w.ref.Key() << ": unable to read its last decision ("
         << recent.status().message() << "); starting at " << n
         << " replica(s) until the first decision\n";
    return n;
  }
  if (recent->empty()) return n;
  const Decision& d = recent->back();
  if (d.action == Action::kFailed && d.recommendation.rule == "observe_failed") return n;
  n = d.action == Action::kScaled ? d.constrained : d.current;
  return std::clamp(n, w.min_replicas, w.max_replicas);
}

Status Daemon::MakeActuators() {
  BuildEnv env;
  env.clock = &clock_;
  env.http = &http_;
  env.run_dir = cfg_.run_dir;
  RETURN_IF_ERROR(MakeGpuSlots());
  env.gpu_slots = gpu_slots_;
  for (const WorkloadSpec& w : cfg_.workloads) {
    const int initial = InitialReplicas(w);
    env.gpus_per_replica = gpu_slots_ ? w.pool.gpus_per_replica : 0;
    auto a = w.target->make(w.ref, initial, env);
    if (!a.ok()) return a.status();
    log_ << "aiscale: " << w.ref.Key() << ": engine " << w.target->engine << ", starting at "
         << initial << " replica(s)\n";
    actuators_[w.ref.Key()] = std::move(a).value();
  }
  return Status::Ok();
}

// One table of GPU slots for every local workload, when the pool has a size: the local engine
// has no other way to know the machine's GPUs, and one table is what keeps two workloads'
// replicas off the same device.
Status Daemon::MakeGpuSlots() {
  if (!cfg_.pool || !cfg_.pool->size) return Status::Ok();
  const bool local =
      std::any_of(cfg_.workloads.begin(), cfg_.workloads.end(),
                  [](const WorkloadSpec& w) { return w.target && w.target->engine == "local"; });
  if (!local) return Status::Ok();
  if (*cfg_.pool->size > kMaxLocalGpuSlots) {
    std::string why = "pool.size ";
    why += std::to_string(*cfg_.pool->size);
    why += " is more GPU slots than the local engine takes (at most ";
    why += std::to_string(kMaxLocalGpuSlots);
    why += ": the GPUs of one machine)";
    return Status::Invalid(why);
  }
  gpu_slots_ = std::make_shared<GpuSlots>(static_cast<int>(*cfg_.pool->size));
  return Status::Ok();
}

Status Daemon::MakeSources() {
  BuildEnv env;
  env.clock = &clock_;
  env.http = &http_;
  env.run_dir = cfg_.run_dir;
  env.endpoints = [this](const WorkloadRef& ref) -> Result<std::vector<ReplicaEndpoint>> {
    auto it = actuators_.find(ref.Key());
    if (it == actuators_.end()) return Status::NotFound("no actuator for " + ref.Key());
    return it->second->Endpoints(ref);
  };
  for (const SourceSpec& s : cfg_.sources) {
    auto src = s.make(env);
    if (!src.ok()) return src.status().Wrap("unable to create source " + s.name);
    sources_[s.name] = std::move(src).value();
  }
  // Every source may have one batch hung at once without starving the others.
  executor_ =
      std::make_unique<control::ThreadPoolExecutor>(std::max<size_t>(4, 2 * sources_.size() + 2));
  return Status::Ok();
}

Status Daemon::AddWorkloads() {
  control::ControllerOptions o;
  o.executor = executor_.get();
  o.telemetry = &telemetry_;
  o.board = &board_;
  o.collect_interval = Seconds(cfg_.period_s);
  o.fetch_timeout = std::min(Seconds(cfg_.period_s), Seconds(5));
  o.dry_run = opt_.dry_run;
  // The engines answer off the tick thread: a tick waits half a period for the observations
  // (at least 1 s, at most the Kubernetes call bound), and no other workload waits on a hung one.
  control::EngineCallOptions calls;
  calls.observe_deadline =
      std::clamp(Seconds(cfg_.period_s) / 2, Duration(Seconds(1)), Duration(Seconds(10)));
  o.engine_calls = calls;
  o.log = [this](const std::string& line) {
    log_ << "aiscale: " << line << "\n";
    log_.flush();
  };
  steering_ = std::make_unique<control::SteeringBoard>(clock_, store_.get(), board_);
  o.steering = steering_.get();
  controller_ = std::make_unique<control::Controller>(clock_, store_.get(), o);
  if (cfg_.pool) {
    RETURN_IF_ERROR(MakePoolSource());
    RETURN_IF_ERROR(controller_->SetPool(*cfg_.pool, pool_source_.get(), &allocator_));
  }
  control::SourceLookup lookup;
  lookup.by_name = [this](const std::string& name) -> MetricSource* {
    auto it = sources_.find(name);
    return it == sources_.end() ? nullptr : it->second.get();
  };
  for (const WorkloadSpec& w : cfg_.workloads) {
    auto b = control::Assemble(w, w.pipeline, lookup, actuators_[w.ref.Key()].get(),
                               cfg_.pool ? &*cfg_.pool : nullptr);
    if (!b.ok()) return b.status();
    RETURN_IF_ERROR(controller_->Add(std::move(b).value()));
  }
  PublishBounds();
  return Status::Ok();
}

Status Daemon::MakePoolSource() {
  const PoolSpec& p = *cfg_.pool;
  if (p.size) {
    pool_source_ = std::make_unique<FixedPoolSource>(*p.size);
    return Status::Ok();
  }
  if (p.from == "slurm") {
    act::SlurmCliOptions o;
    o.slurm_conf = p.slurm.slurm_conf;
    pool_source_ = std::make_unique<act::SlurmPoolSource>(std::make_shared<act::SubprocessRunner>(),
                                                          std::move(o), p.slurm.partition);
    return Status::Ok();
  }
  if (p.from == "kubernetes") return MakeKubernetesPoolSource();
  return Status::Invalid("unable to read the pool's size from " + p.from + "; give pool.size");
}

// The pool from the API server: nodes, pods and quotas, with every workload's object on the
// kubernetes engine as aiscale's (its pods' GPUs are the pool's, not others').
Status Daemon::MakeKubernetesPoolSource() {
  Result<act::KubeEndpoint> ep =
      act::ResolveKubeEndpoint(cfg_.pool_kube_auth, act::KubeAuthEnv::Process());
  if (!ep.ok()) return ep.status().Wrap("unable to read the pool's size from Kubernetes");
  act::KubeClientOptions opts;
  opts.call_timeout = cfg_.pool_kube_timeout;
  opts.attempt_timeout = std::min(cfg_.pool_kube_timeout, Seconds(5));
  std::vector<EngineObject> managed;
  for (const WorkloadSpec& w : cfg_.workloads) {
    if (std::optional<EngineObject> o = w.TargetObject()) managed.push_back(std::move(*o));
  }
  // The AIScalers' targets join as their watch lists them (MakeAiScalers' on_targets); until
  // then the pool's size is unknown and every workload holds.
  managed_ = std::make_shared<act::ManagedObjects>(std::move(managed), cfg_.aiscalers.enabled);
  pool_source_ = std::make_unique<act::KubernetesPoolSource>(
      std::make_unique<act::KubeClient>(*ep, http_, clock_, opts), managed_);
  return Status::Ok();
}

// Each workload's configured bounds as gauges, so an alert can tell a workload pinned at
// max_replicas (deploy/monitoring/aiscale-rules.yaml) and a dashboard can draw the limits.
void Daemon::PublishBounds() {
  telemetry_.DeclareGauge("aiscale_workload_min_replicas", "The workload's min_replicas.");
  telemetry_.DeclareGauge("aiscale_workload_max_replicas", "The workload's max_replicas.");
  for (const WorkloadSpec& w : cfg_.workloads) {
    const MetricLabels wl = {{"workload", w.ref.Key()}};
    telemetry_.Set("aiscale_workload_min_replicas", wl, w.min_replicas);
    telemetry_.Set("aiscale_workload_max_replicas", wl, w.max_replicas);
  }
}

Status Daemon::StartServer() {
  if (!cfg_.server.enabled) return Status::Ok();
  server_ = std::make_unique<server::ApiServer>(
      server::ServerOptions{cfg_.server.host, cfg_.server.port}, board_, store_.get(), telemetry_);
  gate_.Set(cfg_.server.token);
  server_->EnableOperatorRoutes({&clock_, steering_.get(), &gate_});
  RETURN_IF_ERROR(server_->Start());
  log_ << "aiscale: serving /healthz /readyz /metrics /api/v1 on " << cfg_.server.host << ":"
       << server_->port() << "\n"
       << "aiscale: dashboard at http://" << cfg_.server.host << ":" << server_->port()
       << "/; steering (pause, resume, pin) "
       << (cfg_.server.token.empty() ? "off (no server.token_file)" : "on, with the bearer token")
       << "\n";
  return Status::Ok();
}

Status Daemon::MakeElector() {
  const act::LeaderElectionConfig& le = cfg_.leader_election;
  if (!le.enabled) {
    telemetry_.DeclareGauge("aiscale_leader",
                            "1 when this process holds the leader Lease and may apply, else 0.");
    telemetry_.Set("aiscale_leader", {}, 1);  // the only instance: it applies
    return Status::Ok();
  }
  act::KubeAuthEnv env = act::KubeAuthEnv::Process();
  env.warn = [this](const std::string& w) { log_ << "aiscale: warning: " << w << "\n"; };
  auto e = act::MakeLeaseElector(le, http_, clock_, env, &telemetry_);
  if (!e.ok()) return e.status();
  elector_ = std::move(e).value();
  controller_->SetMayApply(false, "not leader (leader: unknown yet)");
  log_ << "aiscale: leader election on lease " << le.namespace_ << "/" << le.name << " as "
       << elector_->identity() << "\n";
  return Status::Ok();
}

void Daemon::SyncLeader() {
  if (!elector_) return;
  std::lock_guard<std::mutex> lock(leader_mu_);
  const bool lead = elector_->IsLeader();
  const std::string holder = elector_->Leader();
  // With no holder known, the elector's error (an unreachable API server, a CA that does not
  // match, a Lease it may not read) is why: say it in every Decision, and once in the log.
  const std::string error = elector_->last_error();
  const bool blind = holder.empty() && !error.empty();
  controller_->SetMayApply(lead, "not leader (leader: " + (holder.empty() ? "none" : holder) + ")" +
                                     (blind ? ": " + error : ""));
  telemetry_.Set("aiscale_leader", {}, lead ? 1 : 0);
  if (!lead && blind && error != logged_error_) {
    log_ << "aiscale: leader election: " << error << "\n";
    logged_error_ = error;
  }
  if (lead) logged_error_.clear();
  if (lead == was_leader_) return;
  was_leader_ = lead;
  if (lead) {
    log_ << "aiscale: became leader (lease " << cfg_.leader_election.namespace_ << "/"
         << cfg_.leader_election.name << ", identity " << elector_->identity() << ")\n";
  } else {
    const std::string why = elector_->last_error();
    log_ << "aiscale: stopped leading" << (why.empty() ? "" : ": " + why) << "\n";
  }
  log_.flush();
}

void Daemon::ElectLoop() {
  while (!stop_) {
    if (clock_.Now() >= elector_->NextStep()) elector_->Step();
    SyncLeader();
    // Short waits, so a leader whose renewals fail stops applying at its renew deadline even
    // between steps.
    if (!WaitUntil(std::min(elector_->NextStep(), clock_.Now() + Seconds(0.25)))) return;
  }
}

void Daemon::ReleaseLease() {
  if (!elector_) return;
  controller_->SetMayApply(false, "stopping");
  const bool held = elector_->IsLeader();
  const Status st = elector_->Release();
  if (!st.ok()) {
    log_ << "aiscale: " << st.message() << "\n";
  } else if (held) {
    log_ << "aiscale: released lease " << cfg_.leader_election.namespace_ << "/"
         << cfg_.leader_election.name << "\n";
  }
}

bool Daemon::WaitUntil(TimePoint t) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const Duration left = t - clock_.Now();
    if (left <= Duration::zero()) return true;
    cv_.wait_for(lock, std::min<Duration>(left, Seconds(1)));
  }
  return false;
}

void Daemon::RequestStop() {
  stop_ = true;
  cv_.notify_all();
}

void Daemon::CollectLoop() {
  while (!stop_) {
    controller_->Collect();
    const TimePoint next = controller_->NextCollect();
    // Re-check at least every 100 ms: a fetch still in flight has no due time yet.
    if (!WaitUntil(std::min(next, clock_.Now() + Seconds(0.1)))) return;
  }
}

void Daemon::AwaitFirstFetches(Duration limit) {
  const TimePoint until = clock_.Now() + limit;
  while (controller_->collector().InFlight() > 0 && clock_.Now() < until && !stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool Daemon::TickOnce() {
  SyncLeader();  // the verdict as of now, not as of the elector thread's last look
  if (aiscalers_) aiscalers_->Apply(*controller_);
  const std::vector<Decision> decisions = controller_->Tick();
  if (aiscalers_) aiscalers_->AfterTick(decisions);
  bool all_completed = !decisions.empty();
  for (size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    const bool completed = controller_->completed(i);
    // Done for batch use once its replicas have also exited (a finished job's last agent may
    // still be saving).
    all_completed = all_completed && completed && d.ready == 0;
    // A workload's completion is logged once, when it is first seen.
    const bool newly = completed && completed_.insert(d.workload).second;
    const bool notable = d.action != Action::kNone || d.vetoed || !d.recommendation.valid ||
                         d.action_detail.rfind("dry run", 0) == 0 || newly;
    if (opt_.verbose || notable) log_ << "aiscale: " << d.Summary() << "\n";
  }
  log_.flush();
  return all_completed;
}

Status Daemon::Run() {
  const Duration period = Seconds(cfg_.period_s);
  if (elector_) elector_->Step();  // a sole candidate leads from the first tick on
  if (aiscalers_) {
    aiscalers_->Start();
    if (!aiscalers_->AwaitSynced(Seconds(10))) {
      log_ << "aiscale: AIScalers not listed yet; their workloads join as the watch delivers "
              "them\n";
    }
    aiscalers_->Apply(*controller_);
  }
  if (opt_.once) {
    if (opt_.ready_wait > Duration::zero()) AwaitReady(opt_.ready_wait);
    controller_->Collect();
    AwaitFirstFetches(std::min(Seconds(cfg_.period_s), Seconds(5)) + Seconds(0.5));
    TickOnce();
    ReleaseLease();
    Shutdown();
    return Status::Ok();
  }
  // Start the first round here, not only on the collector thread: otherwise the wait below can
  // find nothing in flight yet and the first tick would see no data at all.
  controller_->Collect();
  std::thread collector([this] { CollectLoop(); });
  std::thread elector;
  if (elector_) elector = std::thread([this] { ElectLoop(); });
  AwaitFirstFetches(std::min(period, Seconds(5)) + Seconds(0.5));
  TimePoint next = clock_.Now();
  while (!stop_) {
    if (TickOnce() && opt_.exit_when_done) {
      log_ << "aiscale: every workload completed; stopping (--exit-when-done)\n";
      break;
    }
    next += period;
    if (!WaitForTick(next)) break;
  }
  RequestStop();
  collector.join();
  if (elector.joinable()) elector.join();
  ReleaseLease();  // after the last tick: no Apply can follow the hand-over
  Shutdown();
  return Status::Ok();
}

Status Daemon::MakeAiScalers() {
  if (!cfg_.aiscalers.enabled) return Status::Ok();
  ASSIGN_OR_RETURN(WorkloadRegistries reg, WorkloadRegistries::Default());
  registries_ = std::make_unique<WorkloadRegistries>(std::move(reg));
  AiScalerWatchEnv env;
  env.config = &cfg_;
  env.registries = registries_.get();
  env.build.clock = &clock_;
  env.build.http = &http_;
  env.build.run_dir = cfg_.run_dir;
  env.build.gpu_slots = gpu_slots_;
  env.source_by_name = [this](const std::string& name) -> MetricSource* {
    auto it = sources_.find(name);
    return it == sources_.end() ? nullptr : it->second.get();
  };
  env.may_write = [this] { return !opt_.dry_run && (!elector_ || elector_->IsLeader()); };
  env.log = [this](const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu_);
    log_ << "aiscale: " << line << "\n";
    log_.flush();
  };
  env.telemetry = &telemetry_;
  env.on_targets = [this](std::vector<EngineObject> targets) {
    if (managed_) managed_->SetWatched(std::move(targets));
  };
  auto w = AiScalerWatch::Make(std::move(env));
  if (!w.ok()) return w.status().Wrap("unable to watch AIScalers");
  aiscalers_ = std::move(w).value();
  log_ << "aiscale: watching AIScalers in "
       << (cfg_.aiscalers.namespaces.empty()
               ? std::string("every namespace")
               : std::to_string(cfg_.aiscalers.namespaces.size()) + " namespace(s)")
       << "\n";
  return Status::Ok();
}

// Every engine stops at once: local replicas each get their stop grace in parallel, so a
// SIGTERM to a daemon of ten workloads waits one grace period, not ten.
void Daemon::ShutdownEngines() {
  std::vector<std::thread> drains;
  drains.reserve(actuators_.size());
  for (auto& [key, a] : actuators_) {
    Actuator* engine = a.get();
    drains.emplace_back([engine] { engine->Shutdown(); });
  }
  for (std::thread& t : drains) t.join();
}

// `--once` with an engine that starts replicas (local processes): the one tick must not read
// replicas that were started a moment ago and do not listen yet, so wait (at most `limit`)
// until every workload's engine reports its replicas ready.
void Daemon::AwaitReady(Duration limit) {
  const TimePoint until = clock_.Now() + limit;
  while (!stop_ && clock_.Now() < until) {
    bool all_ready = true;
    for (size_t i = 0; i < controller_->size() && all_ready; ++i) {
      const control::WorkloadBinding& b = controller_->binding(i);
      auto s = b.actuator->Observe(b.ref);
      all_ready = s.ok() && s->ready >= s->current;
    }
    if (all_ready) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  log_ << "aiscale: --once: not every workload's replicas were ready after " << ToSeconds(limit)
       << " s; deciding on what there is\n";
}

void Daemon::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (server_) server_->Stop();
  if (aiscalers_) aiscalers_->Stop();
  // Fetches in flight end now (a slow or huge target is not waited out); the Lease is released
  // by now and the engines' shutdowns need no HTTP but readiness probes.
  http_.Cancel();
  // States written every few ticks (store.state_every_ticks) are all written on a clean stop.
  if (controller_) {
    if (const Status st = controller_->FlushStates(); !st.ok()) {
      log_ << "aiscale: unable to write the policies' state on stopping: " << st.message() << "\n";
    }
  }
  ShutdownEngines();
  executor_.reset();  // waits for fetches in flight; sources outlive it
  log_ << "aiscale: stopped\n";
  log_.flush();
}

}  // namespace aiscale::cli
