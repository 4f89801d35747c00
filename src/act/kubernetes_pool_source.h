// KubernetesPoolSource: the shared pool's size on Kubernetes (`pool: {from: kubernetes}`): the
// allocatable nvidia.com/gpu of Ready, schedulable nodes, less what the running pods aiscale
// does not manage hold on them; and per tenant (a namespace) a ceiling from its ResourceQuota
// on requests.nvidia.com/gpu, less what pods aiscale does not manage use in that namespace.
//
// A pod is aiscale's when an ownerReference names a managed object: its StatefulSet or
// PyTorchJob by name, a Deployment through its ReplicaSet ("<name>-<hash>"). The API server not
// answering, or no node with allocatable GPUs at all, is an error, never a pool of 0: the
// PoolWatch then holds every workload where it is. Thread-safe (KubeClient is).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "act/kubernetes_client.h"
#include "act/managed_objects.h"
#include "core/pool.h"
#include "core/spec.h"

namespace aiscale::act {

// The pool's capacity from the API server's NodeList, PodList (pods not Succeeded or Failed)
// and ResourceQuotaList; `managed` are the objects aiscale scales (namespace and name filled).
Result<PoolCapacity> KubePoolCapacity(const nlohmann::json& nodes, const nlohmann::json& pods,
                                      const nlohmann::json& quotas,
                                      const std::vector<EngineObject>& managed);

class KubernetesPoolSource final : public PoolSource {
 public:
  KubernetesPoolSource(std::unique_ptr<KubeClient> client, std::vector<EngineObject> managed);
  // Objects that change (AIScalers): each reading says which version of them it counted.
  KubernetesPoolSource(std::unique_ptr<KubeClient> client,
                       std::shared_ptr<const ManagedObjects> managed);

  std::string_view Name() const override { return "kubernetes"; }
  Result<PoolCapacity> Observe() override;
  uint64_t Basis() const override { return managed_->version(); }

 private:
  std::unique_ptr<KubeClient> client_;
  std::shared_ptr<const ManagedObjects> managed_;
};

}  // namespace aiscale::act
