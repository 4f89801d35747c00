// KubernetesActuator: reads and sets a workload's size through the Kubernetes API's /scale
// subresource (Deployment, StatefulSet, PyTorchJob, any custom resource with /scale).
//
// Per tick and workload it makes O(1) API calls: Observe GETs the /scale (spec'd replicas) and
// the object (its status: readiness is read, never assumed from spec); Apply GETs the /scale,
// returns at once when it already holds `desired` (idempotent), else PATCHes it with a JSON
// merge patch, re-reading and retrying once on 409, and posts one core/v1 Event (reason
// AiscaleRescale) on the object. With gpu_capacity it also lists nodes and pods once per
// Observe (O(cluster)) to report max_available. Errors carry the API's own message and a kind
// (NotFound, PermissionDenied, Conflict, Unavailable, DeadlineExceeded). Leaves the workload
// running on Shutdown. An object whose status has a Succeeded (PyTorchJob) or Complete (Job)
// condition that is True is reported completed (ScaleState::completed). Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "act/kubernetes_auth.h"
#include "act/kubernetes_client.h"
#include "act/kubernetes_target.h"
#include "core/actuator.h"
#include "core/clock.h"
#include "core/spec.h"

namespace aiscale::act {

class KubernetesActuator final : public Actuator {
 public:
  // `cfg` with namespace_ and name already resolved (MakeKubernetesActuator does that).
  KubernetesActuator(KubernetesTargetConfig cfg, std::unique_ptr<KubeClient> client, Clock& clock,
                     std::function<void(const std::string&)> warn);

  std::string_view Name() const override { return "kubernetes"; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override;
  Status Apply(const WorkloadRef& ref, int desired) override;

  // The API paths used, for tests and messages.
  std::string ObjectPath() const;
  std::string ScalePath() const { return ObjectPath() + "/scale"; }

 private:
  Result<int> SpecReplicas(const nlohmann::json& scale) const;
  Status Patch(int desired);
  void PostEvent(const nlohmann::json& scale, int from, int to);
  // max_available, or nullopt with why in `detail`.
  std::optional<int> MaxAvailable(const nlohmann::json& object, int current, std::string& detail);
  std::string Target() const;  // "deployments.apps ai/llm"

  KubernetesTargetConfig cfg_;
  std::unique_ptr<KubeClient> client_;
  Clock& clock_;
  std::function<void(const std::string&)> warn_;
};

// Resolves the credentials named by cfg.auth (through `auth_env`) and the object's namespace
// and name (cfg's, else the workload's, namespace "default" when neither says); an unreadable
// kubeconfig, unknown context or missing service account is an error here, at startup.
Result<std::unique_ptr<Actuator>> MakeKubernetesActuator(const WorkloadRef& ref,
                                                         KubernetesTargetConfig cfg,
                                                         const BuildEnv& env,
                                                         const KubeAuthEnv& auth_env);

// Whether `object`'s status says it finished with success: a condition of type Succeeded (the
// Kubeflow training operator's PyTorchJob, kubeflow.org/v1 JobStatus) or Complete (batch/v1
// Job) with status "True". Returns the condition as text ("status condition Succeeded:
// PyTorchJob train/llama is successfully completed."), nullopt when it does not.
std::optional<std::string> SucceededCondition(const nlohmann::json& object);

// The GPUs one replica of `object` requests (its pod template's containers), or nullopt when
// the resource's template is not known.
std::optional<int> GpusPerReplica(const KubeResource& resource, const nlohmann::json& object);

// How many more replicas needing `per_replica` GPUs fit on the schedulable, Ready nodes of a
// NodeList given the GPU requests of a PodList's running pods (each replica on one node).
int FreeReplicaSlots(const nlohmann::json& nodes, const nlohmann::json& pods, int per_replica);

}  // namespace aiscale::act
