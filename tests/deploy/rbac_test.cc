// deploy/'s RBAC grants the aiscale ServiceAccount exactly what the Kubernetes actuator uses,
// and what the AIScaler watch and status writer use (list and watch the ConfigMap's
// `aiscalers.namespaces`, write a status that conflicts once, read it again, post an Event).
// The actuator is driven through everything it does (observe, scale up and down with an Event
// each, GPU capacity from nodes and pods) for each kind it knows, and the Lease elector through
// taking, renewing and releasing the ConfigMap's Lease, against the wire-level
// FakeKubeApiServer (a fake: Debian ships no kube-apiserver); every request the fake recorded
// is mapped to what the RBAC authorizer checks, and the manifests' Roles and ClusterRoles must
// allow each one and grant nothing that no request uses, with no wildcards.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "act/kubernetes_actuator.h"
#include "act/kubernetes_lease.h"
#include "act/kubernetes_pool_source.h"
#include "act/kubernetes_reflector.h"
#include "act/kubernetes_status_writer.h"
#include "core/curl_http_client.h"
#include "core/system_clock.h"
#include "deploy/kube_request_info.h"
#include "deploy/manifests.h"
#include "deploy/rbac_rules.h"
#include "fakes/fake_kube_apiserver.h"
#include "fakes/yaml_json.h"

namespace aiscale::deploy_test {
namespace {

TEST(DeployKubeRequestInfo, MapsMethodAndPathAsTheApiServerDoes) {
  struct Case {
    const char* name;
    const char* method;
    const char* path;
    const char* query;
    KubeRequestInfo want;
  };
  const std::vector<Case> cases = {
      {"get scale",
       "GET",
       "/apis/apps/v1/namespaces/ai/deployments/llm/scale",
       "",
       {true, "get", "apps", "v1", "deployments", "scale", "ai", "llm"}},
      {"patch scale",
       "PATCH",
       "/apis/apps/v1/namespaces/ai/deployments/llm/scale",
       "",
       {true, "patch", "apps", "v1", "deployments", "scale", "ai", "llm"}},
      {"get object",
       "GET",
       "/apis/kubeflow.org/v1/namespaces/t/pytorchjobs/j",
       "",
       {true, "get", "kubeflow.org", "v1", "pytorchjobs", "", "t", "j"}},
      {"create event",
       "POST",
       "/api/v1/namespaces/ai/events",
       "",
       {true, "create", "", "v1", "events", "", "ai", ""}},
      {"list nodes", "GET", "/api/v1/nodes", "", {true, "list", "", "v1", "nodes", "", "", ""}},
      {"list pods everywhere",
       "GET",
       "/api/v1/pods",
       "fieldSelector=status.phase%21%3DFailed",
       {true, "list", "", "v1", "pods", "", "", ""}},
      {"get node", "GET", "/api/v1/nodes/n1", "", {true, "get", "", "v1", "nodes", "", "", "n1"}},
      {"watch by query",
       "GET",
       "/api/v1/namespaces/ai/pods",
       "watch=true",
       {true, "watch", "", "v1", "pods", "", "ai", ""}},
      {"watch=false is list",
       "GET",
       "/api/v1/namespaces/ai/pods",
       "watch=false",
       {true, "list", "", "v1", "pods", "", "ai", ""}},
      {"watch by prefix",
       "GET",
       "/api/v1/watch/namespaces/ai/pods",
       "",
       {true, "watch", "", "v1", "pods", "", "ai", ""}},
      {"update lease",
       "PUT",
       "/apis/coordination.k8s.io/v1/namespaces/a/leases/l",
       "",
       {true, "update", "coordination.k8s.io", "v1", "leases", "", "a", "l"}},
      {"create lease",
       "POST",
       "/apis/coordination.k8s.io/v1/namespaces/a/leases",
       "",
       {true, "create", "coordination.k8s.io", "v1", "leases", "", "a", ""}},
      {"delete one",
       "DELETE",
       "/api/v1/namespaces/a/pods/p",
       "",
       {true, "delete", "", "v1", "pods", "", "a", "p"}},
      {"delete collection",
       "DELETE",
       "/api/v1/namespaces/a/pods",
       "",
       {true, "deletecollection", "", "v1", "pods", "", "a", ""}},
      {"get a namespace",
       "GET",
       "/api/v1/namespaces/ai",
       "",
       {true, "get", "", "v1", "namespaces", "", "ai", "ai"}},
      {"namespace status",
       "PUT",
       "/api/v1/namespaces/ai/status",
       "",
       {true, "update", "", "v1", "namespaces", "status", "ai", "ai"}},
      {"list namespaces",
       "GET",
       "/api/v1/namespaces",
       "",
       {true, "list", "", "v1", "namespaces", "", "", ""}},
      {"discovery /api", "GET", "/api", "", {false, "get", "", "", "", "", "", ""}},
      {"discovery group", "GET", "/apis/apps/v1", "", {false, "get", "", "", "", "", "", ""}},
      {"healthz", "GET", "/healthz", "", {false, "get", "", "", "", "", "", ""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const KubeRequestInfo got = KubeRequestInfoOf(c.method, c.path, c.query);
    EXPECT_EQ(got.resource_request, c.want.resource_request);
    EXPECT_EQ(got.verb, c.want.verb);
    EXPECT_EQ(got.group, c.want.group);
    EXPECT_EQ(got.version, c.want.version);
    EXPECT_EQ(got.resource, c.want.resource);
    EXPECT_EQ(got.subresource, c.want.subresource);
    EXPECT_EQ(got.namespace_, c.want.namespace_);
    EXPECT_EQ(got.name, c.want.name);
  }
}

// The checker itself, on small RBAC documents: what it allows and what it calls a problem.
TEST(DeployRbacGrants, EvaluatesBindingsAsTheAuthorizerDoes) {
  const char* kDocs = R"(
kind: Role
metadata: {name: r, namespace: ai}
rules: [{apiGroups: [apps], resources: [deployments/scale], verbs: [get, patch]}]
---
kind: RoleBinding
metadata: {name: r, namespace: ai}
roleRef: {kind: Role, name: r}
subjects: [{kind: ServiceAccount, name: sa, namespace: ops}]
---
kind: ClusterRole
metadata: {name: c}
rules: [{apiGroups: [""], resources: [nodes], verbs: [list]}]
---
kind: ClusterRoleBinding
metadata: {name: c}
roleRef: {kind: ClusterRole, name: c}
subjects: [{kind: ServiceAccount, name: sa, namespace: ops}]
---
kind: ClusterRole
metadata: {name: events}
rules: [{apiGroups: [""], resources: [events], verbs: [create]}]
---
kind: RoleBinding
metadata: {name: events, namespace: ai}
roleRef: {kind: ClusterRole, name: events}
subjects: [{kind: ServiceAccount, name: sa, namespace: ops}]
)";
  std::vector<Manifest> all;
  for (const YAML::Node& d : YAML::LoadAll(kDocs)) all.push_back({"test.yaml", d});
  const RbacGrants g = GrantsFor(all, "ops", "sa");
  EXPECT_TRUE(g.problems.empty()) << g.problems.front();
  auto allowed = [&](const char* method, const char* path) {
    const KubeRequestInfo r = KubeRequestInfoOf(method, path);
    for (const Grant& grant : g.grants) {
      if (grant.Allows(r)) return true;
    }
    return false;
  };
  struct Case {
    const char* method;
    const char* path;
    bool want;
  };
  const std::vector<Case> cases = {
      {"PATCH", "/apis/apps/v1/namespaces/ai/deployments/x/scale", true},
      {"PATCH", "/apis/apps/v1/namespaces/other/deployments/x/scale", false},  // other ns
      {"PUT", "/apis/apps/v1/namespaces/ai/deployments/x/scale", false},       // other verb
      {"GET", "/apis/apps/v1/namespaces/ai/deployments/x", false},             // object, not /scale
      {"GET", "/api/v1/nodes", true},
      {"POST", "/api/v1/namespaces/ai/events", true},      // ClusterRole via RoleBinding
      {"POST", "/api/v1/namespaces/other/events", false},  // ...only in that namespace
      {"GET", "/api/v1/pods", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.method) + " " + c.path);
    EXPECT_EQ(allowed(c.method, c.path), c.want);
  }
  // Only the service account's bindings count.
  EXPECT_TRUE(GrantsFor(all, "ops", "someone-else").grants.empty());
}

TEST(DeployRbacGrants, FlagsWildcardsAndDanglingObjects) {
  struct Case {
    const char* name;
    const char* docs;
    const char* want_problem;
  };
  const char* kBind =
      "\n---\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: ClusterRole, name: "
      "c}\nsubjects: [{kind: ServiceAccount, name: sa, namespace: ops}]\n";
  const std::vector<Case> cases = {
      {"wildcard verb",
       "kind: ClusterRole\nmetadata: {name: c}\nrules: [{apiGroups: [''], resources: [pods], "
       "verbs: ['*']}]",
       "wildcard '*'"},
      {"wildcard resource",
       "kind: ClusterRole\nmetadata: {name: c}\nrules: [{apiGroups: [apps], resources: ['*/scale'],"
       " verbs: [get]}]",
       "wildcard '*/scale'"},
      {"non-resource URL",
       "kind: ClusterRole\nmetadata: {name: c}\nrules: [{nonResourceURLs: [/metrics], verbs: "
       "[get]}]",
       "nonResourceURLs"},
      {"unbound role",
       "kind: ClusterRole\nmetadata: {name: c}\nrules: []\n---\nkind: Role\nmetadata: {name: lost, "
       "namespace: x}\nrules: []",
       "bound to nobody"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Manifest> all;
    for (const YAML::Node& d : YAML::LoadAll(std::string(c.docs) + kBind)) {
      all.push_back({"t.yaml", d});
    }
    const RbacGrants g = GrantsFor(all, "ops", "sa");
    bool found = false;
    for (const std::string& p : g.problems) found |= p.find(c.want_problem) != std::string::npos;
    EXPECT_TRUE(found) << "no problem mentioning " << c.want_problem;
  }
  // A binding to a role that does not exist.
  std::vector<Manifest> all;
  for (const YAML::Node& d : YAML::LoadAll(std::string(kBind))) all.push_back({"t.yaml", d});
  ASSERT_EQ(GrantsFor(all, "ops", "sa").problems.size(), 1u);
  EXPECT_NE(GrantsFor(all, "ops", "sa").problems[0].find("binds missing"), std::string::npos);
}

// Everything the actuator does, per kind, in the namespace the ConfigMap's workloads live in.
class DeployRbacTest : public ::testing::Test {
 protected:
  void SetUp() override {
    manifests_ = LoadManifests();
    const YAML::Node deployment = TheOne(manifests_, "Deployment");
    ASSERT_TRUE(deployment) << "deploy/ must hold exactly one Deployment";
    aiscale_ns_ = deployment["metadata"]["namespace"].as<std::string>("");
    sa_ = deployment["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>("");
    ASSERT_FALSE(sa_.empty()) << "the Deployment must name its serviceAccountName";
    const YAML::Node config = YAML::Load(EmbeddedConfig(manifests_));
    for (const YAML::Node& w : config["spec"]["workloads"]) {
      if (w["target"]["engine"].as<std::string>("") == "kubernetes") {
        workload_ns_ = w["target"]["namespace"].as<std::string>("");
      }
    }
    ASSERT_FALSE(workload_ns_.empty()) << "the ConfigMap's config names no kubernetes target";
    ASSERT_TRUE(server_.Start());
  }

  std::unique_ptr<act::KubernetesActuator> Make(const std::string& kind, const std::string& name) {
    act::KubernetesTargetConfig cfg;
    EXPECT_TRUE(act::ResourceForKind(kind, cfg.resource)) << kind;
    cfg.namespace_ = workload_ns_;
    cfg.name = name;
    cfg.gpu_capacity = true;
    act::KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    return std::make_unique<act::KubernetesActuator>(
        cfg, std::make_unique<act::KubeClient>(ep, http_, clock_, act::KubeClientOptions{}), clock_,
        [](const std::string& w) { ADD_FAILURE() << "warning: " << w; });
  }

  // Observe, scale up by one, scale back down: every call the actuator has.
  void Exercise(const std::string& kind, const std::string& name) {
    SCOPED_TRACE(kind);
    auto a = Make(kind, name);
    const WorkloadRef ref{"InferenceService", workload_ns_, name};
    Result<ScaleState> s = a->Observe(ref);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE(s->max_available.has_value()) << s->detail;
    ASSERT_TRUE(a->Apply(ref, s->current + 1).ok());
    ASSERT_TRUE(a->Apply(ref, s->current).ok());
  }

  // The shared pool's size as `pool: {from: kubernetes}` reads it: nodes, pods, quotas.
  void ReadPool() {
    act::KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    act::KubernetesPoolSource source(
        std::make_unique<act::KubeClient>(ep, http_, clock_, act::KubeClientOptions{}),
        {{workload_ns_, "Deployment", "llm"}});
    Result<PoolCapacity> c = source.Observe();
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->gpus, 16) << c->detail;
  }

  // Leader election as the ConfigMap configures it: take the Lease (read, create), renew it
  // (read, update), release it (update) — every call the elector has.
  void Elect() {
    const YAML::Node le = YAML::Load(EmbeddedConfig(manifests_))["spec"]["leader_election"];
    ASSERT_TRUE(le && le["enabled"].as<bool>()) << "the ConfigMap's config elects no leader";
    act::LeaderElectionConfig cfg;
    cfg.namespace_ = le["namespace"].as<std::string>();
    cfg.name = le["name"].as<std::string>();
    ASSERT_EQ(cfg.namespace_, aiscale_ns_) << "the Lease must live in aiscale's namespace";
    act::KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    act::LeaseElector elector(
        cfg, "aiscale-0_1_00000000",
        std::make_unique<act::KubeClient>(ep, http_, clock_, act::KubeClientOptions{}), clock_);
    ASSERT_TRUE(elector.Step());
    ASSERT_TRUE(elector.Step());
    ASSERT_TRUE(elector.Release().ok());
  }

  // The AIScaler side as the daemon runs it: the reflector lists and watches the namespace
  // the ConfigMap names, the status writer writes on a stale version (409, re-read, write)
  // and posts a Warning Event.
  void WatchAiScalers() {
    const YAML::Node cfg = YAML::Load(EmbeddedConfig(manifests_))["spec"]["aiscalers"];
    ASSERT_TRUE(cfg) << "the ConfigMap's config watches no AIScalers";
    const std::string ns = cfg["namespaces"][0].as<std::string>("");
    ASSERT_EQ(ns, workload_ns_);
    ASSERT_TRUE(
        server_.AddCrd(testing::YamlToJson(YAML::LoadFile(DeployDir() + "/06-aiscaler-crd.yaml"))));
    nlohmann::json ais =
        testing::YamlToJson(YAML::LoadFile(DeployDir() + "/examples/aiscaler.yaml"));
    ais["metadata"]["namespace"] = ns;
    ASSERT_EQ(server_.CreateCustom(ais).first, 201);
    act::KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    act::KubeClient client(ep, http_, clock_, act::KubeClientOptions{});
    act::KubeReflector reflector("/apis/aiscale.dev/v1alpha1/namespaces/" + ns + "/aiscalers",
                                 client, clock_, act::ReflectorOptions{}, nullptr, nullptr);
    std::thread run([&] { reflector.Run(); });
    for (int i = 0; i < 2000 && server_.OpenWatches() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    reflector.Stop();
    run.join();
    ASSERT_TRUE(reflector.synced());
    act::StatusWriter writer(client, clock_, act::StatusWriterOptions{}, nullptr, nullptr);
    const std::string key = ns + "/" + ais["metadata"]["name"].get<std::string>();
    writer.SetVersion(key, "1");
    writer.Queue(key, {{"currentReplicas", 1}});
    writer.QueueEvent(key, "", "Warning", "InvalidSpec", "spec.x: test");
    ASSERT_EQ(writer.WriteQueued(), 1);
  }

  std::vector<Manifest> manifests_;
  std::string aiscale_ns_, sa_, workload_ns_;
  testing::FakeKubeApiServer server_;
  CurlHttpClient http_;
  SystemClock clock_;
};

TEST_F(DeployRbacTest, GrantsExactlyWhatTheActuatorUses) {
  server_.AddDeployment(workload_ns_, "llm", 2, 2, /*gpus_per_pod=*/1);
  server_.AddStatefulSet(workload_ns_, "cache", 3, 3);
  server_.AddPyTorchJob(workload_ns_, "llama", 4, 4, /*gpus_per_worker=*/8);
  // A StatefulSet's pods in the fake ask for no GPU: give its template one, so that its
  // capacity path (nodes, pods) runs as well.
  nlohmann::json sts = server_.Object("apps", "statefulsets", workload_ns_, "cache");
  sts["spec"]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"nvidia.com/gpu", "1"}}}};
  server_.SetObject("apps", "statefulsets", workload_ns_, "cache", sts);
  server_.AddNode("gpu-a", 8);
  server_.AddNode("gpu-b", 8);
  server_.AddPod(workload_ns_, "llm-0", "gpu-a", 1);
  Exercise("Deployment", "llm");
  Exercise("StatefulSet", "cache");
  Exercise("PyTorchJob", "llama");
  ASSERT_EQ(server_.Events().size(), 6u);  // one per scale change: up and down, three kinds
  server_.AddResourceQuota(workload_ns_, "gpus", 8);
  server_.SetPodOwner(workload_ns_, "llm-0", "ReplicaSet", "llm-5d9f8c7b6d");  // llm's: ours
  ReadPool();
  Elect();
  WatchAiScalers();

  std::vector<KubeRequestInfo> used;
  for (const auto& r : server_.Requests()) {
    ASSERT_TRUE(r.authorized) << r.method << " " << r.path;
    const KubeRequestInfo info = KubeRequestInfoOf(r.method, r.path, r.query);
    // The fake's own reading of the request agrees (two independent parsers).
    EXPECT_EQ(info.verb + " " + info.group + " " + info.RbacResource(),
              r.verb + " " + r.group + " " +
                  (r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource));
    used.push_back(info);
  }

  const RbacGrants granted = GrantsFor(manifests_, aiscale_ns_, sa_);
  for (const std::string& p : granted.problems) ADD_FAILURE() << p;
  for (const KubeRequestInfo& r : used) {
    SCOPED_TRACE(r.ToString());
    ASSERT_TRUE(r.resource_request);
    bool allowed = false;
    for (const Grant& g : granted.grants) allowed |= g.Allows(r);
    EXPECT_TRUE(allowed) << "deploy/ does not grant " << r.ToString();
  }
  for (const Grant& g : granted.grants) {
    bool needed = false;
    for (const KubeRequestInfo& r : used) needed |= g.Allows(r);
    EXPECT_TRUE(needed) << "deploy/ grants " << g.ToString() << ", which no request uses";
  }
}

}  // namespace
}  // namespace aiscale::deploy_test
