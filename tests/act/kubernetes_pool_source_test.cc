// The pool's size read from Kubernetes (pool: {from: kubernetes}): KubePoolCapacity on API
// objects built here, and KubernetesPoolSource over the fake API server (a fake, not
// kube-apiserver: Debian ships none; it speaks the real wire format, tests/fakes/).
#include "act/kubernetes_pool_source.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/curl_http_client.h"
#include "core/system_clock.h"
#include "fakes/fake_kube_apiserver.h"

namespace aiscale::act {
namespace {

using nlohmann::json;
using testing::FakeKubeApiServer;

json Node(const std::string& name, int gpus, bool ready = true, bool cordoned = false) {
  json alloc = {{"cpu", "96"}};
  if (gpus > 0) alloc["nvidia.com/gpu"] = std::to_string(gpus);
  return {
      {"metadata", {{"name", name}}},
      {"spec", {{"unschedulable", cordoned}}},
      {"status",
       {{"allocatable", alloc},
        {"conditions", json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
}

// A pod of `gpus` GPUs on `node` ("" pending), owned by `kind`/`owner` ("" none).
json Pod(const std::string& ns, const std::string& node, int gpus, const std::string& kind = "",
         const std::string& owner = "", const std::string& phase = "Running") {
  json p = {{"metadata", {{"namespace", ns}, {"name", "p"}}},
            {"spec",
             {{"containers",
               json::array(
                   {{{"name", "c"},
                     {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}},
            {"status", {{"phase", phase}}}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  if (!kind.empty()) {
    p["metadata"]["ownerReferences"] = json::array({{{"kind", kind}, {"name", owner}}});
  }
  return p;
}

json Quota(const std::string& ns, int gpus) {
  return {{"metadata", {{"namespace", ns}, {"name", "gpu-quota"}}},
          {"spec", {{"hard", {{"requests.nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

json List(std::vector<json> items) { return {{"items", json(std::move(items))}}; }

TEST(KubePoolCapacity, ReadyNodesLessOthersPods) {
  // A custom resource named by `resource:` alone has no kind: its pods are matched by the
  // owner's apiVersion and name.
  const std::vector<EngineObject> managed = {{"ai", "Deployment", "llm", "apps/v1"},
                                             {"train", "PyTorchJob", "llama", "kubeflow.org/v1"},
                                             {"ai", "", "widget", "example.com/v1"}};
  auto owned_by = [](json pod, const std::string& api_version) {
    pod["metadata"]["ownerReferences"][0]["apiVersion"] = api_version;
    return pod;
  };
  struct Case {
    std::string name;
    std::vector<json> nodes, pods, quotas;
    int64_t gpus;        // -1: an error
    std::string detail;  // substring of the detail or of the error
    std::map<std::string, int64_t> ceilings;
  };
  const std::vector<Case> cases = {
      {"two Ready nodes",
       {Node("a", 8), Node("b", 8)},
       {},
       {},
       16,
       "16 GPUs on 2 Ready node(s)",
       {}},
      {"NotReady and cordoned nodes add nothing",
       {Node("a", 8), Node("b", 8, false), Node("c", 4, true, true)},
       {},
       {},
       8,
       "not counted (NotReady or cordoned): b (8 GPUs), c (4 GPUs)",
       {}},
      {"our pods stay in the pool; others' come out",
       {Node("a", 8), Node("b", 8)},
       {Pod("ai", "a", 2, "ReplicaSet", "llm-6d4cf56db6"),
        Pod("train", "b", 4, "PyTorchJob", "llama"),
        Pod("ai", "a", 1, "ReplicaSet", "other-6d4cf56db6"), Pod("ops", "b", 3)},
       {},
       12,
       "4 GPUs held by pods aiscale does not manage",
       {}},
      {"a ReplicaSet of another Deployment with our name as prefix is not ours",
       {Node("a", 8)},
       {Pod("ai", "a", 2, "ReplicaSet", "llm-canary-6d4cf56db6")},
       {},
       6,
       "",
       {}},
      {"a kind-less custom resource's pods are ours by apiVersion and name",
       {Node("a", 8)},
       {owned_by(Pod("ai", "a", 2, "Widget", "widget"), "example.com/v1"),
        owned_by(Pod("ai", "a", 1, "Widget", "widget"), "other.example.com/v1")},
       {},
       7,
       "1 GPU held by pods aiscale does not manage",
       {}},
      {"the same name in another namespace is not ours",
       {Node("a", 8)},
       {Pod("other", "a", 2, "ReplicaSet", "llm-6d4cf56db6")},
       {},
       6,
       "",
       {}},
      {"finished pods hold nothing",
       {Node("a", 8)},
       {Pod("ops", "a", 8, "", "", "Succeeded")},
       {},
       8,
       "",
       {}},
      {"others' pods past a node's GPUs take that node only",
       {Node("a", 2), Node("b", 8)},
       {Pod("ops", "a", 4)},
       {},
       8,
       "",
       {}},
      {"a quota, less others' use in its namespace",
       {Node("a", 16)},
       {Pod("search", "a", 2), Pod("search", "", 1), Pod("search", "a", 4, "ReplicaSet", "x-1")},
       {Quota("search", 10), Quota("research", 4)},
       10,
       "quotas: search 10 GPUs (7 GPUs used by others)",
       {{"search", 3}, {"research", 4}}},
      {"no node with GPUs: unknown, not 0",
       {Node("a", 0)},
       {},
       {},
       -1,
       "no node has allocatable nvidia.com/gpu",
       {}},
      {"every GPU node NotReady: a real 0",
       {Node("a", 8, false)},
       {},
       {},
       0,
       "0 GPUs on 0 Ready",
       {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<PoolCapacity> got =
        KubePoolCapacity(List(c.nodes), List(c.pods), List(c.quotas), managed);
    if (c.gpus < 0) {
      ASSERT_FALSE(got.ok());
      EXPECT_NE(got.status().message().find(c.detail), std::string::npos) << got.status().message();
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(got->gpus, c.gpus) << got->detail;
    EXPECT_NE(got->detail.find(c.detail), std::string::npos) << got->detail;
    EXPECT_EQ(got->tenant_ceilings.size(), c.ceilings.size()) << got->detail;
    for (const auto& [ns, want] : c.ceilings) {
      auto it = got->tenant_ceilings.find(ns);
      ASSERT_NE(it, got->tenant_ceilings.end()) << ns;
      EXPECT_EQ(it->second, want) << ns;
    }
  }
}

TEST(KubePoolCapacity, MalformedObjectsAreSkippedNotFatal) {
  // Lists and fields of the wrong type (a broken proxy, a newer API server) count as absent.
  const json nodes = {
      {"items", json::array({json("x"),
                             Node("a", 8),
                             {{"status", {{"allocatable", {{"nvidia.com/gpu", "lots"}}}}}}})}};
  const json pods = {{"items", json::array({json(42), {{"spec", "x"}}})}};
  Result<PoolCapacity> got = KubePoolCapacity(nodes, pods, json("not a list"), {});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->gpus, 8);
}

class KubernetesPoolSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.Start()); }
  KubernetesPoolSource Make() {
    KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    KubeClientOptions opts;
    opts.call_timeout = Seconds(2);
    opts.attempt_timeout = Seconds(0.5);
    opts.seed = 7;
    return KubernetesPoolSource(std::make_unique<KubeClient>(ep, http_, clock_, opts),
                                {{"ai", "Deployment", "llm", "apps/v1"}});
  }
  FakeKubeApiServer server_;
  CurlHttpClient http_;
  SystemClock clock_;
};

TEST_F(KubernetesPoolSourceTest, ReadsNodesPodsAndQuotasOverTheWire) {
  server_.AddNode("gpu-a", 8);
  server_.AddNode("gpu-b", 8);
  server_.AddNode("gpu-c", 8, /*ready=*/false);
  server_.AddPod("ai", "llm-6d4cf56db6-x1", "gpu-a", 2);
  server_.SetPodOwner("ai", "llm-6d4cf56db6-x1", "ReplicaSet", "llm-6d4cf56db6");
  server_.AddPod("ops", "notebook", "gpu-b", 3);
  server_.AddPod("ops", "done", "gpu-b", 4, "Succeeded");
  server_.AddResourceQuota("ops", "gpus", 4);
  KubernetesPoolSource source = Make();
  Result<PoolCapacity> got = source.Observe();
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->gpus, 13);  // 16 on the Ready nodes, less the notebook's 3
  EXPECT_EQ(got->tenant_ceilings.at("ops"), 1);
  EXPECT_NE(got->detail.find("not counted (NotReady or cordoned): gpu-c (8 GPUs)"),
            std::string::npos)
      << got->detail;
}

// AIScalers' targets: until their watch has listed, the size is unknown (their pods would count
// as others'); once listed, their pods are aiscale's, and each reading names the set it used.
TEST_F(KubernetesPoolSourceTest, AiScalerTargetsCountAsAiscalesOnceListed) {
  server_.AddNode("gpu-a", 8);
  server_.AddPod("ai", "kv-0", "gpu-a", 3);
  server_.SetPodOwner("ai", "kv-0", "StatefulSet", "kv");
  act::KubeEndpoint ep;
  ep.server = server_.Url();
  ep.token = "fake-token";
  auto managed = std::make_shared<ManagedObjects>(std::vector<EngineObject>{}, true);
  KubernetesPoolSource source(std::make_unique<KubeClient>(ep, http_, clock_, KubeClientOptions{}),
                              managed);
  Result<PoolCapacity> got = source.Observe();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("not listed yet"), std::string::npos)
      << got.status().message();
  managed->SetWatched({});
  got = source.Observe();
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->gpus, 5);  // kv's 3 are others' while no AIScaler scales it
  EXPECT_EQ(got->basis, source.Basis());
  managed->SetWatched({{"ai", "StatefulSet", "kv", "apps/v1"}});
  EXPECT_NE(got->basis, source.Basis());  // that reading is of the older set
  got = source.Observe();
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->gpus, 8);
  EXPECT_EQ(got->basis, source.Basis());
}

TEST_F(KubernetesPoolSourceTest, AnApiServerThatFailsIsAnErrorNotAnEmptyPool) {
  server_.AddNode("gpu-a", 8);
  for (const char* path : {"/api/v1/nodes", "/api/v1/pods", "/api/v1/resourcequotas"}) {
    SCOPED_TRACE(path);
    server_.InjectFault("GET", path, FakeKubeApiServer::Fault{403, 100});
    KubernetesPoolSource source = Make();
    Result<PoolCapacity> got = source.Observe();
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find("unable to read the pool's size from Kubernetes"),
              std::string::npos)
        << got.status().message();
    server_.InjectFault("GET", path, FakeKubeApiServer::Fault{403, 0});
  }
}

}  // namespace
}  // namespace aiscale::act
