#include "act/kubernetes_pool_source.h"

#include <algorithm>
#include <map>
#include <utility>

#include "act/kubernetes_objects.h"

namespace aiscale::act {
namespace {

using kube::kGpu;
using kube::kMaxGpus;
using kube::Lookup;
using kube::StringAt;
using nlohmann::json;

constexpr const char* kQuotaGpu = "requests.nvidia.com/gpu";

const json& Items(const json& list) {
  static const json kEmpty = json::array();
  return list.is_object() && list.contains("items") && list["items"].is_array() ? list["items"]
                                                                                : kEmpty;
}

// "llm-6d4cf56db6" is a ReplicaSet of Deployment "llm": the name, a dash, a hash without one.
bool ReplicaSetOf(const std::string& rs, const std::string& deployment) {
  return rs.size() > deployment.size() + 1 && rs.compare(0, deployment.size(), deployment) == 0 &&
         rs[deployment.size()] == '-' && rs.find('-', deployment.size() + 1) == std::string::npos;
}

bool Managed(const json& pod, const std::vector<EngineObject>& managed) {
  const std::string ns = StringAt(pod, "metadata.namespace");
  const json* owners = Lookup(pod, "metadata.ownerReferences");
  if (!owners || !owners->is_array()) return false;
  for (const json& o : *owners) {
    const std::string kind = StringAt(o, "kind"), name = StringAt(o, "name");
    for (const EngineObject& m : managed) {
      if (m.namespace_ != ns) continue;
      if (kind == m.kind && name == m.name) return true;
      // A custom resource named by its resource alone: its kind is not known here, its API is.
      if (m.kind.empty() && name == m.name && !m.api_version.empty() &&
          StringAt(o, "apiVersion") == m.api_version) {
        return true;
      }
      if (m.kind == "Deployment" && kind == "ReplicaSet" && ReplicaSetOf(name, m.name)) return true;
    }
  }
  return false;
}

struct Others {
  std::map<std::string, int64_t> by_node;       // GPUs held on each node
  std::map<std::string, int64_t> by_namespace;  // GPUs requested in each namespace (quota use)
};

// GPUs of the pods aiscale does not manage.
Others OthersOf(const json& pods, const std::vector<EngineObject>& managed) {
  Others o;
  for (const json& p : Items(pods)) {
    const std::string phase = StringAt(p, "status.phase");
    if (phase == "Succeeded" || phase == "Failed" || Managed(p, managed)) continue;
    const json* spec = Lookup(p, "spec");
    const int64_t gpus = spec ? kube::PodSpecGpus(*spec) : 0;
    if (gpus <= 0) continue;
    const std::string node = StringAt(p, "spec.nodeName");
    if (!node.empty()) o.by_node[node] = std::min(kMaxGpus, o.by_node[node] + gpus);
    const std::string ns = StringAt(p, "metadata.namespace");
    o.by_namespace[ns] = std::min(kMaxGpus, o.by_namespace[ns] + gpus);
  }
  return o;
}

// Each namespace's ceiling: the smallest quota on requests.nvidia.com/gpu there, less what
// pods aiscale does not manage use in it.
void AddCeilings(const json& quotas, const Others& others, PoolCapacity& c) {
  std::string text;
  for (const json& q : Items(quotas)) {
    const json* hard = Lookup(q, "spec.hard");
    if (!hard || !hard->is_object() || !hard->contains(kQuotaGpu)) continue;
    const int hard_gpus = kube::WholeQuantity((*hard)[kQuotaGpu]);
    if (hard_gpus < 0) continue;
    const std::string ns = StringAt(q, "metadata.namespace");
    auto used = others.by_namespace.find(ns);
    const int64_t by_others = used == others.by_namespace.end() ? 0 : used->second;
    const int64_t ceiling = std::max<int64_t>(0, hard_gpus - by_others);
    auto [it, fresh] = c.tenant_ceilings.emplace(ns, ceiling);
    if (!fresh) it->second = std::min(it->second, ceiling);
    text += (text.empty() ? "" : ", ") + ns + " " + GpuCount(hard_gpus) +
            (by_others > 0 ? " (" + GpuCount(by_others) + " used by others)" : "");
  }
  if (!text.empty()) c.detail += "; quotas: " + text;
}

}  // namespace

Result<PoolCapacity> KubePoolCapacity(const json& nodes, const json& pods, const json& quotas,
                                      const std::vector<EngineObject>& managed) {
  const Others others = OthersOf(pods, managed);
  int64_t gpus = 0, held = 0;
  int ready = 0, with_gpus = 0;
  std::string out;
  for (const json& n : Items(nodes)) {
    const json* alloc = Lookup(n, "status.allocatable");
    if (!alloc || !alloc->is_object() || !alloc->contains(kGpu)) continue;
    const int total = kube::WholeQuantity((*alloc)[kGpu]);
    if (total <= 0) continue;
    ++with_gpus;
    const std::string name = StringAt(n, "metadata.name");
    if (!kube::NodeSchedulable(n)) {
      out += (out.empty() ? "" : ", ") + name + " (" + GpuCount(total) + ")";
      continue;
    }
    ++ready;
    auto it = others.by_node.find(name);
    const int64_t taken = std::min<int64_t>(total, it == others.by_node.end() ? 0 : it->second);
    held += taken;
    gpus = std::min(kMaxGpus, gpus + total - taken);
  }
  if (with_gpus == 0) {
    return Status::Invalid("no node has allocatable " + std::string(kGpu) +
                           " (the NVIDIA device plugin reports it): the pool's size is unknown");
  }
  PoolCapacity c;
  c.gpus = gpus;
  c.detail = GpuCount(gpus) + " on " + std::to_string(ready) + " Ready node(s)";
  if (held > 0) c.detail += ", " + GpuCount(held) + " held by pods aiscale does not manage";
  if (!out.empty()) c.detail += "; not counted (NotReady or cordoned): " + out;
  AddCeilings(quotas, others, c);
  return c;
}

KubernetesPoolSource::KubernetesPoolSource(std::unique_ptr<KubeClient> client,
                                           std::vector<EngineObject> managed)
    : KubernetesPoolSource(std::move(client),
                           std::make_shared<ManagedObjects>(std::move(managed), false)) {}

KubernetesPoolSource::KubernetesPoolSource(std::unique_ptr<KubeClient> client,
                                           std::shared_ptr<const ManagedObjects> managed)
    : client_(std::move(client)), managed_(std::move(managed)) {}

Result<PoolCapacity> KubernetesPoolSource::Observe() {
  const std::string ctx = "unable to read the pool's size from Kubernetes";
  // Taken first: a change to the set while the lists are read makes this reading the older one.
  Result<ManagedObjects::View> managed = managed_->Read();
  if (!managed.ok()) return managed.status().Wrap(ctx);
  Result<json> nodes = client_->Call("GET", "/api/v1/nodes");
  if (!nodes.ok()) return nodes.status().Wrap(ctx);
  // Terminated pods hold no GPUs; the field selector keeps the list small.
  Result<json> pods = client_->Call(
      "GET", "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed");
  if (!pods.ok()) return pods.status().Wrap(ctx);
  Result<json> quotas = client_->Call("GET", "/api/v1/resourcequotas");
  if (!quotas.ok()) return quotas.status().Wrap(ctx);
  Result<PoolCapacity> c = KubePoolCapacity(*nodes, *pods, *quotas, managed->objects);
  if (c.ok()) c->basis = managed->version;
  return c;
}

}  // namespace aiscale::act
