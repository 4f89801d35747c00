#include "act/kubernetes_actuator.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <map>
#include <utility>

#include "act/kubernetes_objects.h"

namespace aiscale::act {
namespace {

using kube::Int32;
using kube::kGpu;
using kube::kMaxGpus;
using kube::Lookup;
using kube::NodeSchedulable;
using kube::PodSpecGpus;
using kube::StringAt;
using kube::WholeQuantity;
using nlohmann::json;

}  // namespace

std::optional<std::string> SucceededCondition(const json& object) {
  const json* conds = Lookup(object, "status.conditions");
  if (!conds || !conds->is_array()) return std::nullopt;
  for (const json& c : *conds) {
    const std::string type = StringAt(c, "type");
    if ((type == "Succeeded" || type == "Complete") && StringAt(c, "status") == "True") {
      std::string why = "status condition " + type;
      const std::string message = StringAt(c, "message");
      if (!message.empty()) why.append(": ").append(message);
      return why;
    }
  }
  return std::nullopt;
}

std::optional<int> GpusPerReplica(const KubeResource& r, const json& object) {
  const char* path = nullptr;
  if (r.group == "apps") path = "spec.template.spec";
  if (r.group == "kubeflow.org" && r.resource == "pytorchjobs") {
    path = "spec.pytorchReplicaSpecs.Worker.template.spec";
  }
  if (!path) return std::nullopt;
  const json* spec = Lookup(object, path);
  if (!spec || !spec->is_object()) return std::nullopt;
  return PodSpecGpus(*spec);
}

int FreeReplicaSlots(const json& nodes, const json& pods, int per_replica) {
  if (per_replica <= 0) return 0;
  std::map<std::string, int64_t> used;
  if (pods.contains("items") && pods["items"].is_array()) {
    for (const json& p : pods["items"]) {
      const std::string phase = StringAt(p, "status.phase");
      if (phase == "Succeeded" || phase == "Failed") continue;
      const std::string node = StringAt(p, "spec.nodeName");
      const json* spec = Lookup(p, "spec");
      if (!node.empty() && spec) used[node] = std::min(kMaxGpus, used[node] + PodSpecGpus(*spec));
    }
  }
  int64_t slots = 0;
  if (!nodes.contains("items") || !nodes["items"].is_array()) return 0;
  for (const json& n : nodes["items"]) {
    if (!NodeSchedulable(n)) continue;
    const json* alloc = Lookup(n, "status.allocatable");
    if (!alloc || !alloc->is_object() || !alloc->contains(kGpu)) continue;
    const int total = WholeQuantity((*alloc)[kGpu]);
    const std::string name = StringAt(n, "metadata.name");
    slots = std::min(kMaxGpus, slots + std::max<int64_t>(0, total - used[name]) / per_replica);
  }
  return static_cast<int>(slots);
}

KubernetesActuator::KubernetesActuator(KubernetesTargetConfig cfg,
                                       std::unique_ptr<KubeClient> client, Clock& clock,
                                       std::function<void(const std::string&)> warn)
    : cfg_(std::move(cfg)), client_(std::move(client)), clock_(clock), warn_(std::move(warn)) {}

std::string KubernetesActuator::ObjectPath() const {
  const KubeResource& r = cfg_.resource;
  const std::string base = r.group.empty() ? "/api/" + r.version : "/apis/" + r.ApiVersion();
  return base + "/namespaces/" + cfg_.namespace_ + "/" + r.resource + "/" + cfg_.name;
}

std::string KubernetesActuator::Target() const {
  return cfg_.resource.QualifiedName() + " " + cfg_.namespace_ + "/" + cfg_.name;
}

Result<int> KubernetesActuator::SpecReplicas(const json& scale) const {
  const json* r = Lookup(scale, "spec.replicas");
  if (!r) return 0;  // omitted when zero
  const std::optional<int> n = Int32(*r);
  if (!n) {
    return Status::Internal("unable to read the scale of " + Target() +
                            ": spec.replicas is not an integer from 0 to 2^31-1");
  }
  return *n;
}

Result<ScaleState> KubernetesActuator::Observe(const WorkloadRef&) {
  const std::string ctx = "unable to observe " + Target();
  ASSIGN_OR_RETURN(const json scale, client_->Call("GET", ScalePath()));
  ASSIGN_OR_RETURN(const int current, SpecReplicas(scale));
  ASSIGN_OR_RETURN(const json object, client_->Call("GET", ObjectPath()));
  ScaleState s;
  s.current = current;
  const std::string field = "status." + cfg_.resource.ready_path;
  const json* ready = Lookup(object, field);
  const std::optional<int> ready_n = ready ? Int32(*ready) : std::optional<int>(0);
  if (!ready_n) return Status::Internal(ctx + ": " + field + " is not an integer from 0 to 2^31-1");
  s.ready = *ready_n;  // omitted when zero
  if (const std::optional<std::string> done = SucceededCondition(object)) {
    s.completed = true;  // the training operator says the job finished: nothing to scale
    s.detail = *done;
    return s;
  }
  if (s.ready < s.current) {
    s.detail = std::to_string(s.ready) + " of " + std::to_string(s.current) + " replicas ready (" +
               field + ")";
  }
  if (cfg_.gpu_capacity) {
    std::string why;
    s.max_available = MaxAvailable(object, current, why);
    if (!why.empty()) s.detail += (s.detail.empty() ? "" : "; ") + why;
  }
  return s;
}

std::optional<int> KubernetesActuator::MaxAvailable(const json& object, int current,
                                                    std::string& detail) {
  const std::optional<int> per = GpusPerReplica(cfg_.resource, object);
  if (!per || *per <= 0) {
    detail = "gpu_capacity: the GPUs of one replica of " + Target() + " are not known";
    return std::nullopt;
  }
  Result<json> nodes = client_->Call("GET", "/api/v1/nodes");
  if (!nodes.ok()) {
    detail = "gpu_capacity: " + nodes.status().message();
    return std::nullopt;
  }
  // Terminated pods hold no GPUs; the field selector keeps the list small.
  Result<json> pods = client_->Call(
      "GET", "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed");
  if (!pods.ok()) {
    detail = "gpu_capacity: " + pods.status().message();
    return std::nullopt;
  }
  return static_cast<int>(
      std::min<int64_t>(INT_MAX, int64_t{current} + FreeReplicaSlots(*nodes, *pods, *per)));
}

Status KubernetesActuator::Patch(int desired) {
  const std::string body = json{{"spec", {{"replicas", desired}}}}.dump();
  Result<json> r = client_->Call("PATCH", ScalePath(), body, "application/merge-patch+json");
  return r.ok() ? Status::Ok() : r.status();
}

Status KubernetesActuator::Apply(const WorkloadRef&, int desired) {
  const std::string ctx = "unable to set scale for " + Target();
  if (desired < 0) return Status::Invalid(ctx + ": desired replicas " + std::to_string(desired));
  Result<json> scale = client_->Call("GET", ScalePath());
  if (!scale.ok()) return scale.status().Wrap(ctx);
  ASSIGN_OR_RETURN(int from, SpecReplicas(*scale));
  if (from == desired) return Status::Ok();
  Status st = Patch(desired);
  if (st.IsConflict()) {  // someone else wrote it: look again, then try once more
    scale = client_->Call("GET", ScalePath());
    if (!scale.ok()) return scale.status().Wrap(ctx);
    ASSIGN_OR_RETURN(from, SpecReplicas(*scale));
    if (from == desired) return Status::Ok();
    st = Patch(desired);
  }
  if (!st.ok()) return st.Wrap(ctx);
  PostEvent(*scale, from, desired);
  return Status::Ok();
}

void KubernetesActuator::PostEvent(const json& scale, int from, int to) {
  const WallTime now = clock_.WallNow();
  const std::string stamp = FormatWallTime(now);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx",
                static_cast<unsigned long long>(now.time_since_epoch().count()));
  json involved = {{"apiVersion", cfg_.resource.ApiVersion()},
                   {"name", cfg_.name},
                   {"namespace", cfg_.namespace_}};
  if (!cfg_.resource.kind.empty()) involved["kind"] = cfg_.resource.kind;
  if (const json* uid = Lookup(scale, "metadata.uid"); uid && uid->is_string()) {
    involved["uid"] = *uid;
  }
  const json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", cfg_.name + "." + hex}, {"namespace", cfg_.namespace_}}},
      {"involvedObject", involved},
      {"reason", "AiscaleRescale"},
      {"message", std::to_string(from) + " → " + std::to_string(to)},
      {"type", "Normal"},
      {"source", {{"component", "aiscale"}}},
      {"reportingComponent", "aiscale"},
      {"firstTimestamp", stamp},
      {"lastTimestamp", stamp},
      {"count", 1},
  };
  Result<json> r = client_->Call("POST", "/api/v1/namespaces/" + cfg_.namespace_ + "/events",
                                 event.dump(), "application/json");
  // The rescale happened; a lost event is worth a warning, not a failed Apply.
  if (!r.ok() && warn_)
    warn_("unable to post rescale event on " + Target() + ": " + r.status().message());
}

Result<std::unique_ptr<Actuator>> MakeKubernetesActuator(const WorkloadRef& ref,
                                                         KubernetesTargetConfig cfg,
                                                         const BuildEnv& env,
                                                         const KubeAuthEnv& auth_env) {
  if (!env.clock || !env.http) {
    return Status::Internal("kubernetes target of " + ref.Key() + " needs a clock and HTTP client");
  }
  cfg.namespace_ = ref.ObjectNamespace(cfg.namespace_);
  cfg.name = ref.ObjectName(cfg.name);
  auto bad = [](const std::string& s) {
    return s.empty() || !std::all_of(s.begin(), s.end(), [](char c) {
             return std::islower(static_cast<unsigned char>(c)) ||
                    std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
           });
  };
  if (bad(cfg.name) || bad(cfg.namespace_)) {
    return Status::Invalid("kubernetes target of " + ref.Key() + ": '" + cfg.namespace_ + "/" +
                           cfg.name + "' is not a valid namespace/name; set target.name");
  }
  Result<KubeEndpoint> ep = ResolveKubeEndpoint(cfg.auth, auth_env);
  if (!ep.ok()) return ep.status().Wrap("kubernetes target of " + ref.Key());
  KubeClientOptions opts;
  opts.call_timeout = cfg.call_timeout;
  opts.attempt_timeout = cfg.attempt_timeout;
  auto client = std::make_unique<KubeClient>(*ep, *env.http, *env.clock, opts);
  return std::unique_ptr<Actuator>(std::make_unique<KubernetesActuator>(
      std::move(cfg), std::move(client), *env.clock, auth_env.warn));
}

}  // namespace aiscale::act
