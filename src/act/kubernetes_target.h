// KubernetesTargetConfig: the `target:` of a workload scaled through the Kubernetes API's /scale
// subresource (engine: kubernetes).
//
// Parsed once at the edge (docs/architecture.md, practice 7): errors land at their field paths in
// the ConfigNode's ConfigErrors, unknown fields are rejected. Only the fields are checked here; the
// kubeconfig or service account named by `auth` is read when the actuator is made (KubeAuthConfig),
// so a missing file is a startup error, never a crash. A plain value type; copy freely.
//
//   target: {engine: kubernetes, kind: Deployment, namespace: ai, name: llm,
//            auth: {kubeconfig: ~/.kube/config, context: prod}, gpu_capacity: true}
//   target: {engine: kubernetes, resource: example.com/v1/inferencepools,
//            ready_path: readyReplicas}
#pragma once

#include <string>

#include "core/config/config_node.h"
#include "core/time.h"

namespace aiscale::act {

// Which object's /scale is driven, and how its readiness is read.
struct KubeResource {
  std::string group;     // empty for the core group ("" /v1)
  std::string version;   // e.g. "v1"
  std::string resource;  // plural, lower case: "deployments"
  std::string kind;      // e.g. "Deployment"; empty when only `resource` named a custom one
  // Dotted path under the object's `status` to its ready count ("readyReplicas").
  std::string ready_path;

  // "deployments.apps" (the API server's own spelling of a resource in its messages).
  std::string QualifiedName() const { return group.empty() ? resource : resource + "." + group; }
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

// Where credentials come from. kDefault: in-cluster when KUBERNETES_SERVICE_HOST is set, else
// $KUBECONFIG, else ~/.kube/config.
struct KubeAuthConfig {
  enum class Mode { kDefault, kKubeconfig, kInCluster };
  Mode mode = Mode::kDefault;
  std::string kubeconfig;  // kKubeconfig: the file (relative paths against the config file)
  std::string context;     // empty: the kubeconfig's current-context
};

struct KubernetesTargetConfig {
  KubeResource resource;
  std::string namespace_;  // empty: the workload's namespace, else "default"
  std::string name;        // empty: the workload's name
  KubeAuthConfig auth;
  bool gpu_capacity = false;              // compute max_available from nodes and pods (O(cluster))
  Duration call_timeout = Seconds(10);    // each Observe/Apply call's deadline, retries included
  Duration attempt_timeout = Seconds(5);  // one HTTP exchange's deadline within it

  // Reads `target` (a map); errors land in target.errors() at their field paths.
  static KubernetesTargetConfig Parse(const config::ConfigNode& target);
};

// The `auth:` child of `parent` (absent: kDefault); errors land at its field paths. Shared by
// a kubernetes target and `leader_election`, so both reach the cluster the same way.
KubeAuthConfig ParseKubeAuth(const config::ConfigNode& parent);

// The well-known kinds (Deployment, StatefulSet, PyTorchJob) as resources; false when unknown.
bool ResourceForKind(const std::string& kind, KubeResource& out);

}  // namespace aiscale::act
