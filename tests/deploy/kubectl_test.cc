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
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "deploy/manifests.h"

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
    docs_["/apis"] = {
        {"kind", "APIGroupList"},
        {"apiVersion", "v1"},
        {"groups",
         {Group("apps"), Group("rbac.authorization.k8s.io"), Group("networking.k8s.io")}}};
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
      << "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: "
         "{server: 'http://127.0.0.1:"
      << api.port()
      << "'}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\nusers: [{name: u, "
         "user: {}}]\n";
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

}  // namespace
}  // namespace aiscale::deploy_test
