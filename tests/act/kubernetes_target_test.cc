// The kubernetes target's config: resources by kind or group/version/resource, defaults, auth,
// and errors at their file:line:column field paths; and its registry entry.
#include "act/kubernetes_target.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "act/actuator_registry.h"

namespace aiscale::act {
namespace {

struct Parsed {
  KubernetesTargetConfig cfg;
  config::ConfigErrors errors;
};

Parsed ParseTarget(const std::string& yaml) {
  Parsed p;
  config::ConfigNode root = config::ParseConfig(yaml, "/etc/aiscale/c.yaml", p.errors);
  p.cfg = KubernetesTargetConfig::Parse(root.Child("target"));
  return p;
}

std::string AllErrors(const config::ConfigErrors& errs) {
  std::string out;
  for (const auto& e : errs.all()) out += e.ToString() + "\n";
  return out;
}

TEST(KubernetesTargetConfig, ResolvesResources) {
  struct Case {
    const char* name;
    const char* yaml;
    KubeResource want;
  };
  const std::vector<Case> cases = {
      {"kind Deployment",
       "target: {engine: kubernetes, kind: Deployment}",
       {"apps", "v1", "deployments", "Deployment", "readyReplicas"}},
      {"kind StatefulSet",
       "target: {engine: kubernetes, kind: StatefulSet}",
       {"apps", "v1", "statefulsets", "StatefulSet", "readyReplicas"}},
      {"kind PyTorchJob",
       "target: {engine: kubernetes, kind: PyTorchJob}",
       {"kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", "replicaStatuses.Worker.active"}},
      {"resource of a known kind",
       "target: {engine: kubernetes, resource: apps/v1/deployments}",
       {"apps", "v1", "deployments", "Deployment", "readyReplicas"}},
      {"resource pytorchjobs",
       "target: {engine: kubernetes, resource: kubeflow.org/v1/pytorchjobs}",
       {"kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", "replicaStatuses.Worker.active"}},
      {"custom resource with ready_path",
       "target: {engine: kubernetes, resource: serving.example.com/v1beta1/pools, kind: Pool, "
       "ready_path: replicas.ready}",
       {"serving.example.com", "v1beta1", "pools", "Pool", "replicas.ready"}},
      {"core group",
       "target: {engine: kubernetes, resource: v1/replicationcontrollers, "
       "ready_path: readyReplicas}",
       {"", "v1", "replicationcontrollers", "", "readyReplicas"}},
      {"ready_path overrides a known kind's",
       "target: {engine: kubernetes, kind: Deployment, ready_path: availableReplicas}",
       {"apps", "v1", "deployments", "Deployment", "availableReplicas"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Parsed p = ParseTarget(c.yaml);
    ASSERT_TRUE(p.errors.empty()) << AllErrors(p.errors);
    EXPECT_EQ(p.cfg.resource.group, c.want.group);
    EXPECT_EQ(p.cfg.resource.version, c.want.version);
    EXPECT_EQ(p.cfg.resource.resource, c.want.resource);
    EXPECT_EQ(p.cfg.resource.kind, c.want.kind);
    EXPECT_EQ(p.cfg.resource.ready_path, c.want.ready_path);
  }
}

TEST(KubernetesTargetConfig, DefaultsAndAuth) {
  Parsed d = ParseTarget("target: {engine: kubernetes, kind: Deployment}");
  ASSERT_TRUE(d.errors.empty()) << AllErrors(d.errors);
  EXPECT_EQ(d.cfg.namespace_, "");  // the workload's, resolved when the actuator is made
  EXPECT_EQ(d.cfg.name, "");
  EXPECT_EQ(d.cfg.auth.mode, KubeAuthConfig::Mode::kDefault);
  EXPECT_FALSE(d.cfg.gpu_capacity);
  EXPECT_EQ(d.cfg.call_timeout, Seconds(10));

  Parsed k = ParseTarget(
      "target:\n  engine: kubernetes\n  kind: PyTorchJob\n  namespace: train\n  name: llama\n"
      "  auth: {kubeconfig: kube/config, context: prod}\n  gpu_capacity: true\n  timeout: 20s\n");
  ASSERT_TRUE(k.errors.empty()) << AllErrors(k.errors);
  EXPECT_EQ(k.cfg.namespace_, "train");
  EXPECT_EQ(k.cfg.name, "llama");
  EXPECT_EQ(k.cfg.auth.mode, KubeAuthConfig::Mode::kKubeconfig);
  EXPECT_EQ(k.cfg.auth.kubeconfig, "/etc/aiscale/kube/config");  // beside the config file
  EXPECT_EQ(k.cfg.auth.context, "prod");
  EXPECT_TRUE(k.cfg.gpu_capacity);
  EXPECT_EQ(k.cfg.call_timeout, Seconds(20));

  Parsed i =
      ParseTarget("target: {engine: kubernetes, kind: Deployment, auth: {in_cluster: true}}");
  ASSERT_TRUE(i.errors.empty()) << AllErrors(i.errors);
  EXPECT_EQ(i.cfg.auth.mode, KubeAuthConfig::Mode::kInCluster);
}

TEST(KubernetesTargetConfig, ParseErrorsNameTheirField) {
  struct Case {
    const char* name;
    const char* yaml;
    std::string want;  // substring of one error
  };
  const std::vector<Case> cases = {
      {"neither kind nor resource", "target:\n  engine: kubernetes\n",
       "c.yaml:2:3: target: missing required field 'kind' or 'resource'"},
      {"unknown kind", "target:\n  engine: kubernetes\n  kind: Job\n",
       "c.yaml:3:9: target.kind: unknown kind 'Job'"},
      {"malformed resource", "target:\n  engine: kubernetes\n  resource: deployments\n",
       "target.resource: must be group/version/resource"},
      {"resource with upper case", "target:\n  resource: apps/v1/Deployments\n",
       "target.resource: must be group/version/resource"},
      {"custom resource without ready_path", "target:\n  resource: example.com/v1/pools\n",
       "target: missing required field 'ready_path' for custom resource pools.example.com"},
      {"kind and resource disagree",
       "target:\n  kind: Deployment\n  resource: apps/v1/statefulsets\n",
       "target.kind: names deployments.apps but resource names statefulsets.apps"},
      {"bad ready_path", "target:\n  kind: Deployment\n  ready_path: .ready\n",
       "target.ready_path: must be a dotted path"},
      {"bad namespace", "target:\n  kind: Deployment\n  namespace: My_NS\n",
       "target.namespace: must be a DNS label"},
      {"in_cluster with kubeconfig",
       "target:\n  kind: Deployment\n  auth: {in_cluster: true, kubeconfig: /k}\n",
       "target.auth: in_cluster: true excludes kubeconfig and context"},
      {"unknown auth field", "target:\n  kind: Deployment\n  auth: {token: abc}\n",
       "target.auth.token: unknown field 'token'"},
      {"auth not a map", "target:\n  kind: Deployment\n  auth: in_cluster\n",
       "target.auth: must be a map"},
      {"unknown field", "target:\n  kind: Deployment\n  replicas: 3\n",
       "c.yaml:3:3: target.replicas: unknown field 'replicas'"},
      {"wrong engine", "target:\n  engine: local\n  kind: Deployment\n", "target.engine"},
      {"attempt_timeout above timeout",
       "target:\n  kind: Deployment\n  timeout: 2s\n  attempt_timeout: 5s\n",
       "target.attempt_timeout: must be <= timeout"},
      {"gpu_capacity not a bool", "target:\n  kind: Deployment\n  gpu_capacity: maybe\n",
       "target.gpu_capacity"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Parsed p = ParseTarget(c.yaml);
    const std::string all = AllErrors(p.errors);
    EXPECT_NE(all.find(c.want), std::string::npos) << "errors were:\n" << all;
  }
}

TEST(KubernetesTargetConfig, RegistryParsesTheEngine) {
  Result<ActuatorRegistry> reg = DefaultActuatorRegistry();
  ASSERT_TRUE(reg.ok()) << reg.status().message();
  config::ConfigErrors errs;
  config::ConfigNode root =
      config::ParseConfig("target: {engine: kubernetes, kind: Deployment}", "c.yaml", errs);
  Result<TargetSpec> spec = reg->Parse(root.Child("target"));
  ASSERT_TRUE(spec.ok()) << spec.status().message() << AllErrors(errs);
  EXPECT_EQ(spec->engine, "kubernetes");
  EXPECT_TRUE(spec->make != nullptr);

  config::ConfigErrors bad_errs;
  config::ConfigNode bad =
      config::ParseConfig("target: {engine: kubernetes, kind: Job}", "c.yaml", bad_errs);
  EXPECT_FALSE(reg->Parse(bad.Child("target")).ok());
  EXPECT_FALSE(bad_errs.empty());
}

}  // namespace
}  // namespace aiscale::act
