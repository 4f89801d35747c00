#include "cli/daemon.h"

#include <algorithm>
#include <filesystem>
#include <thread>

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
  RETURN_IF_ERROR(d->OpenStore());
  RETURN_IF_ERROR(d->MakeActuators());
  RETURN_IF_ERROR(d->MakeSources());
  RETURN_IF_ERROR(d->AddWorkloads());
  RETURN_IF_ERROR(d->StartServer());
  return d;
}

Status Daemon::OpenStore() {
  if (cfg_.store_path.empty()) return Status::Ok();
  std::error_code ec;
  const auto dir = std::filesystem::path(cfg_.store_path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  auto s = store::SqliteStore::Open(cfg_.store_path, cfg_.store_options);
  if (!s.ok()) return s.status().Wrap("unable to open store " + cfg_.store_path);
  store_ = std::move(s).value();
  return Status::Ok();
}

// The size a workload's engine should hold until the first decision: what the last recorded
// decision left it at (so a restart neither doubles nor drops replicas), else min_replicas.
int Daemon::InitialReplicas(const WorkloadSpec& w) const {
  int n = std::max(w.min_replicas, 1);
  if (!store_) return n;
  auto recent = store_->Recent(w.ref.Key(), 1);
  if (!recent.ok() || recent->empty()) return n;
  const Decision& d = recent->back();
  if (d.action == Action::kFailed && d.recommendation.rule == "observe_failed") return n;
  n = d.action == Action::kScaled ? d.constrained : d.current;
  return std::clamp(n, w.min_replicas, w.max_replicas);
}

Status Daemon::MakeActuators() {
  BuildEnv env{&clock_, &http_, nullptr, cfg_.run_dir};
  for (const WorkloadSpec& w : cfg_.workloads) {
    const int initial = InitialReplicas(w);
    auto a = w.target->make(w.ref, initial, env);
    if (!a.ok()) return a.status();
    log_ << "aiscale: " << w.ref.Key() << ": engine " << w.target->engine << ", starting at "
         << initial << " replica(s)\n";
    actuators_[w.ref.Key()] = std::move(a).value();
  }
  return Status::Ok();
}

Status Daemon::MakeSources() {
  BuildEnv env{&clock_, &http_, nullptr, cfg_.run_dir};
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
  controller_ = std::make_unique<control::Controller>(clock_, store_.get(), o);
  control::SourceLookup lookup;
  lookup.by_name = [this](const std::string& name) -> MetricSource* {
    auto it = sources_.find(name);
    return it == sources_.end() ? nullptr : it->second.get();
  };
  for (const WorkloadSpec& w : cfg_.workloads) {
    auto b = control::Assemble(w, w.pipeline, lookup, actuators_[w.ref.Key()].get());
    if (!b.ok()) return b.status();
    RETURN_IF_ERROR(controller_->Add(std::move(b).value()));
  }
  return Status::Ok();
}

Status Daemon::StartServer() {
  if (!cfg_.server.enabled) return Status::Ok();
  server_ = std::make_unique<server::ApiServer>(
      server::ServerOptions{cfg_.server.host, cfg_.server.port}, board_, store_.get(), telemetry_);
  RETURN_IF_ERROR(server_->Start());
  log_ << "aiscale: serving /healthz /readyz /metrics /api/v1 on " << cfg_.server.host << ":"
       << server_->port() << "\n";
  return Status::Ok();
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

void Daemon::TickOnce() {
  for (const Decision& d : controller_->Tick()) {
    const bool notable = d.action != Action::kNone || d.vetoed || !d.recommendation.valid ||
                         d.action_detail.rfind("dry run", 0) == 0;
    if (opt_.verbose || notable) log_ << "aiscale: " << d.Summary() << "\n";
  }
  log_.flush();
}

Status Daemon::Run() {
  const Duration period = Seconds(cfg_.period_s);
  if (opt_.once) {
    controller_->Collect();
    AwaitFirstFetches(std::min(Seconds(cfg_.period_s), Seconds(5)) + Seconds(0.5));
    TickOnce();
    Shutdown();
    return Status::Ok();
  }
  // Start the first round here, not only on the collector thread: otherwise the wait below can
  // find nothing in flight yet and the first tick would see no data at all.
  controller_->Collect();
  std::thread collector([this] { CollectLoop(); });
  AwaitFirstFetches(std::min(period, Seconds(5)) + Seconds(0.5));
  TimePoint next = clock_.Now();
  while (!stop_) {
    TickOnce();
    next += period;
    if (!WaitUntil(next)) break;
  }
  RequestStop();
  collector.join();
  Shutdown();
  return Status::Ok();
}

void Daemon::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (server_) server_->Stop();
  for (auto& [key, a] : actuators_) a->Shutdown();
  executor_.reset();  // waits for fetches in flight; sources outlive it
  log_ << "aiscale: stopped\n";
  log_.flush();
}

}  // namespace aiscale::cli
