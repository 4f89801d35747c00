#include "cli/aiscaler_watch.h"

#include <set>

namespace aiscale::cli {
namespace {

std::string Collection(const std::string& ns) {
  const std::string base = std::string("/apis/") + kAiScalerGroup + "/" + kAiScalerVersion;
  return ns.empty() ? base + "/" + kAiScalerPlural
                    : base + "/namespaces/" + ns + "/" + kAiScalerPlural;
}

}  // namespace

Result<std::unique_ptr<AiScalerWatch>> AiScalerWatch::Make(AiScalerWatchEnv env) {
  const AiScalerWatchConfig& cfg = env.config->aiscalers;
  ASSIGN_OR_RETURN(act::KubeEndpoint ep, act::ResolveKubeEndpoint(cfg.auth, env.auth_env));
  std::unique_ptr<AiScalerWatch> w(new AiScalerWatch(std::move(env)));
  act::KubeClientOptions co;
  co.call_timeout = cfg.call_timeout;
  co.attempt_timeout = std::min(cfg.call_timeout, Seconds(5));
  Clock& clock = *w->env_.build.clock;
  w->client_ = std::make_unique<act::KubeClient>(ep, *w->env_.build.http, clock, co);
  act::StatusWriterOptions so;
  so.qps = cfg.status_qps;
  w->writer_ = std::make_unique<act::StatusWriter>(*w->client_, clock, so, w->env_.may_write,
                                                   w->env_.log, w->env_.telemetry);
  AiScalerSyncEnv se;
  se.ctx = {w->env_.registries, &w->env_.config->sources, w->env_.config->period_s, cfg.auth,
            cfg.call_timeout};
  if (w->env_.config->pool) se.ctx.pool = &*w->env_.config->pool;
  AiScalerWatch* self = w.get();
  se.make_actuator = [self](const WorkloadSpec& spec) -> Result<std::unique_ptr<Actuator>> {
    if (!spec.target) return Status::Invalid("no target");
    return spec.target->make(spec.ref, std::max(spec.min_replicas, 1), self->env_.build);
  };
  se.source_by_name = w->env_.source_by_name;
  std::set<std::string> file_keys;
  for (const WorkloadSpec& f : w->env_.config->workloads) file_keys.insert(f.ref.Key());
  se.file_has = [file_keys](const std::string& key) { return file_keys.count(key) > 0; };
  se.check_target = [self](const ParsedAiScaler& p, const WorkloadSpec& spec) {
    return self->CheckTarget(p, spec);
  };
  se.writer = w->writer_.get();
  se.clock = &clock;
  se.metrics_interval = cfg.metrics_interval;
  se.log = w->env_.log;
  se.telemetry = w->env_.telemetry;
  w->sync_ = std::make_unique<AiScalerSync>(std::move(se));
  const std::vector<std::string> namespaces =
      cfg.namespaces.empty() ? std::vector<std::string>{""} : cfg.namespaces;
  for (const std::string& ns : namespaces) {
    w->reflectors_.push_back(std::make_unique<act::KubeReflector>(Collection(ns), *w->client_,
                                                                  clock, w->env_.reflector, nullptr,
                                                                  w->env_.log, w->env_.telemetry));
  }
  return w;
}

AiScalerWatch::~AiScalerWatch() { Stop(); }

void AiScalerWatch::Start() {
  for (auto& r : reflectors_) threads_.emplace_back([r = r.get()] { r->Run(); });
  threads_.emplace_back([w = writer_.get()] { w->Run(); });
}

void AiScalerWatch::Stop() {
  for (auto& r : reflectors_) r->Stop();
  if (writer_) writer_->Stop();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

bool AiScalerWatch::AwaitSynced(Duration limit) {
  Clock& clock = *env_.build.clock;
  const TimePoint until = clock.Now() + limit;
  for (;;) {
    if (Synced()) return true;
    if (clock.Now() >= until) return false;
    clock.SleepUntil(std::min(until, clock.Now() + Seconds(0.02)));
  }
}

bool AiScalerWatch::Synced() const {
  for (const auto& r : reflectors_) {
    if (!r->synced()) return false;
  }
  return true;
}

size_t AiScalerWatch::Apply(control::Controller& controller) {
  // Asked first, so that what the lists delivered is among the changes taken below.
  const bool synced = Synced();
  size_t changed = 0;
  for (auto& r : reflectors_) changed += sync_->Apply(r->TakeChanges(), controller);
  // Not before every watch has listed: a partial set would count the rest's pods as others'.
  if (env_.on_targets && synced && (changed > 0 || !targets_told_)) {
    env_.on_targets(sync_->Targets());
    targets_told_ = true;
  }
  return changed;
}

// A PyTorchJob's own bounds (spec.elasticPolicy.minReplicas/maxReplicas, which its operator
// enforces): min_replicas above that max can never be met.
std::optional<std::string> AiScalerWatch::CheckTarget(const ParsedAiScaler& p,
                                                      const WorkloadSpec& spec) {
  if (p.reference.rfind("PyTorchJob/", 0) != 0) return std::nullopt;
  const std::string name = p.reference.substr(std::string("PyTorchJob/").size());
  const std::string path =
      "/apis/kubeflow.org/v1/namespaces/" + p.namespace_ + "/pytorchjobs/" + name;
  Result<nlohmann::json> job = client_->Call("GET", path);
  if (!job.ok()) return std::nullopt;  // a missing target shows at Observe (FailedGetScale)
  const nlohmann::json::json_pointer ptr("/spec/elasticPolicy/maxReplicas");
  if (!job->contains(ptr) || !(*job)[ptr].is_number_integer()) return std::nullopt;
  const int max = (*job)[ptr].get<int>();
  if (spec.min_replicas <= max) return std::nullopt;
  return "spec.min_replicas: " + std::to_string(spec.min_replicas) +
         " is above the target's own limit (pytorchjobs.kubeflow.org " + p.namespace_ + "/" + name +
         " spec.elasticPolicy.maxReplicas " + std::to_string(max) + ")";
}

}  // namespace aiscale::cli
