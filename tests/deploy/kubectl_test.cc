// Also, against the wire-level FakeKubeApiServer serving deploy/'s AIScaler CRD (its schema
// enforced, its printer columns rendered as the API server's Table): `kubectl apply` of the
// example AIScaler creates it, one with a wrong type is refused with the API server's field
// error, and `kubectl get aiscalers` (and `get ais`) prints HPA's columns from the status
// aiscale writes.
//
// `kubectl apply --dry-run=client -f deploy/` accepts every manifest, when a kubectl is
// installed (Debian's kubernetes-client, or any on PATH); skipped with a message otherwise.
// A client-side dry run still asks the API server which resource each kind is (discovery) and
// whether each object exists, and there is no cluster here, so kubectl talks to a small local
// discovery server: the API server's discovery documents (APIVersions, APIGroupList,
// APIResourceList) for exactly the built-in kinds deploy/ may use, and 404 Status for every
// object. A misspelt kind or apiVersion, or YAML kubectl cannot read, fails. No OpenAPI schema is
// served, so field-level validation is off
// (--validate=false): tests/deploy/manifests_test.cc checks the fields that matter.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "deploy/manifests.h"
#include "fakes/fake_kube_apiserver.h"
#include "fakes/yaml_json.h"

namespace aiscale::deploy_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Resource {
  const char* name;
  const char* singular;
  const char* kind;
  bool namespaced;
};

json ResourceList(const std::string& group_version, const std::vector<Resource>& rs) {
  json list = {{"kind", "APIResourceList"},
               {"apiVersion", "v1"},
               {"groupVersion", group_version},
               {"resources", json::array()}};
  for (const Resource& r : rs) {
    list["resources"].push_back(
        {{"name", r.name},
         {"singularName", r.singular},
         {"namespaced", r.namespaced},
         {"kind", r.kind},
         {"verbs",
          {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}}});
  }
  return list;
}

json Group(const std::string& name) {
  const json v = {{"groupVersion", name + "/v1"}, {"version", "v1"}};
  return {{"name", name}, {"versions", json::array({v})}, {"preferredVersion", v}};
}

// Discovery for the built-in kinds of deploy/, and 404 for any object.
class DiscoveryServer {
 public:
  DiscoveryServer() {
    docs_["/api"] = {{"kind", "APIVersions"}, {"versions", {"v1"}}};
    docs_["/apis"] = {{"kind", "APIGroupList"},
                      {"apiVersion", "v1"},
                      {"groups",
                       {Group("apps"), Group("rbac.authorization.k8s.io"),
                        Group("apiextensions.k8s.io"), Group("networking.k8s.io")}}};
    docs_["/api/v1"] =
        ResourceList("v1", {{"namespaces", "namespace", "Namespace", false},
                            {"serviceaccounts", "serviceaccount", "ServiceAccount", true},
                            {"configmaps", "configmap", "ConfigMap", true},
                            {"services", "service", "Service", true}});
    docs_["/apis/apps/v1"] =
        ResourceList("apps/v1", {{"deployments", "deployment", "Deployment", true}});
    docs_["/apis/rbac.authorization.k8s.io/v1"] =
        ResourceList("rbac.authorization.k8s.io/v1",
                     {{"roles", "role", "Role", true},
                      {"rolebindings", "rolebinding", "RoleBinding", true},
                      {"clusterroles", "clusterrole", "ClusterRole", false},
                      {"clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false}});
    docs_["/apis/apiextensions.k8s.io/v1"] = ResourceList(
        "apiextensions.k8s.io/v1", {{"customresourcedefinitions", "customresourcedefinition",
                                     "CustomResourceDefinition", false}});
    docs_["/apis/networking.k8s.io/v1"] = ResourceList(
        "networking.k8s.io/v1", {{"networkpolicies", "networkpolicy", "NetworkPolicy", true}});
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      auto it = docs_.find(req.path);
      if (it != docs_.end()) {
        res.set_content(it->second.dump(), "application/json");
        return;
      }
      res.status = 404;
      res.set_content(json{{"kind", "Status"},
                           {"apiVersion", "v1"},
                           {"metadata", json::object()},
                           {"status", "Failure"},
                           {"message", "the server could not find the requested resource"},
                           {"reason", "NotFound"},
                           {"code", 404}}
                          .dump(),
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~DiscoveryServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  std::map<std::string, json> docs_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST(DeployKubectl, ClientDryRunAppliesEveryManifest) {
  if (std::system("command -v kubectl >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "kubectl not installed (Debian package kubernetes-client): "
                    "`kubectl apply --dry-run=client -f deploy/` not run";
  }
  DiscoveryServer api;
  ASSERT_GT(api.port(), 0);
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("aiscale_deploy_kubectl_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "kubeconfig")
      << testing::FakeKubeconfig("http://127.0.0.1:" + std::to_string(api.port()), "");
  const std::string cmd = "kubectl --kubeconfig " + (dir / "kubeconfig").string() +
                          " --cache-dir " + (dir / "cache").string() +
                          " apply --dry-run=client --validate=false -f " + DeployDir() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int rc = pclose(p);
  fs::remove_all(dir);
  EXPECT_EQ(rc, 0) << out;
  // One "kind/name created (dry run)" line per object in deploy/.
  size_t created = 0;
  for (size_t at = out.find("created (dry run)"); at != std::string::npos;
       at = out.find("created (dry run)", at + 1)) {
    ++created;
  }
  EXPECT_EQ(created, LoadManifests().size()) << out;
  EXPECT_NE(out.find("deployment.apps/aiscale created (dry run)"), std::string::npos) << out;
}

// kubectl with a kubeconfig for `server`; returns its exit status, fills `out`.
int Kubectl(const std::string& server, const std::string& args, std::string& out) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("aiscale_kubectl_ais_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "kubeconfig") << testing::FakeKubeconfig(server);
  const std::string cmd = "kubectl --kubeconfig " + (dir / "kubeconfig").string() +
                          " --cache-dir " + (dir / "cache").string() + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[512];
  out.clear();
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int rc = pclose(p);
  fs::remove_all(dir);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(DeployKubectl, AppliesAnAIScalerAndShowsHpaColumns) {
  if (std::system("command -v kubectl >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "kubectl not installed (Debian package kubernetes-client)";
  }
  // Any request is let in: Debian's kubectl (1.32) sent no Authorization header to this
  // plain-http server (kubectl -v=7: its first discovery GET went without one and was answered
  // 401). Authentication is the actuator's tests' business; this one is about the CRD as
  // kubectl sees it.
  testing::FakeKubeApiServer::Options options;
  options.token = "";
  testing::FakeKubeApiServer api(options);
  ASSERT_TRUE(api.Start());
  std::string error;
  ASSERT_TRUE(api.AddCrd(testing::YamlToJson(YAML::LoadFile(DeployDir() + "/06-aiscaler-crd.yaml")),
                         &error))
      << error;
  std::string out;
  const std::string example = DeployDir() + "/examples/aiscaler.yaml";
  ASSERT_EQ(Kubectl(api.Url(), "apply --validate=false -f " + example, out), 0) << out;
  EXPECT_NE(out.find("aiscaler.aiscale.dev/mistral-7b-instruct created"), std::string::npos) << out;
  json stored = api.Object("aiscale.dev", "aiscalers", "serving", "mistral-7b-instruct");
  ASSERT_TRUE(stored.is_object());
  EXPECT_EQ(stored["spec"]["max_replicas"], 8);

  // The status aiscale writes, then the columns kubectl shows from it.
  stored["status"] = {{"reference", "Deployment/mistral-7b-instruct"},
                      {"targets", "12/16"},
                      {"currentReplicas", 3},
                      {"desiredReplicas", 3}};
  ASSERT_EQ(api.UpdateStatus(stored).first, 200);
  for (const char* resource : {"aiscalers", "ais"}) {
    SCOPED_TRACE(resource);
    ASSERT_EQ(Kubectl(api.Url(), std::string("get ") + resource + " -n serving", out), 0) << out;
    std::istringstream lines(out);
    std::string header, row;
    std::getline(lines, header);
    std::getline(lines, row);
    std::istringstream h(header), r(row);
    std::vector<std::string> columns, cells;
    for (std::string w; h >> w;) columns.push_back(w);
    for (std::string w; r >> w;) cells.push_back(w);
    EXPECT_EQ(columns, (std::vector<std::string>{"NAME", "REFERENCE", "TARGETS", "MIN", "MAX",
                                                 "REPLICAS", "AGE"}))
        << out;
    ASSERT_EQ(cells.size(), 7u) << out;
    EXPECT_EQ(cells[0], "mistral-7b-instruct");
    EXPECT_EQ(cells[1], "Deployment/mistral-7b-instruct");
    EXPECT_EQ(cells[2], "12/16");
    EXPECT_EQ(cells[3], "1");
    EXPECT_EQ(cells[4], "8");
    EXPECT_EQ(cells[5], "3");
  }

  // A wrong type is refused by the API server (the CRD's schema), named by its field.
  const fs::path bad =
      fs::path(::testing::TempDir()) / ("aiscaler_bad_" + std::to_string(getpid()) + ".yaml");
  std::string text;
  {
    std::ifstream in(example);
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  text.replace(text.find("max_replicas: 8"), 15, "max_replicas: eight");
  text.replace(text.find("name: mistral-7b-instruct\n  namespace"), 25, "name: bad-aiscaler");
  std::ofstream(bad) << text;
  EXPECT_NE(Kubectl(api.Url(), "apply --validate=false -f " + bad.string(), out), 0) << out;
  EXPECT_NE(out.find("spec.max_replicas"), std::string::npos) << out;
  EXPECT_NE(out.find("must be of type integer"), std::string::npos) << out;
  fs::remove(bad);
}

}  // namespace
}  // namespace aiscale::deploy_test
