// deploy/'s objects agree with each other and with the config they run: the Deployment (two
// replicas, probes on /healthz and /readyz at the config's server port, non-root, read-only
// root filesystem, a writable emptyDir where the store goes, resources) mounts the ConfigMap
// where its command reads it, runs as the ServiceAccount the RBAC binds, and the Service
// selects its pods on that port. Every namespaced object's namespace is created by deploy/.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "deploy/manifests.h"

namespace aiscale::deploy_test {
namespace {

namespace fs = std::filesystem;

class DeployManifests : public ::testing::Test {
 protected:
  void SetUp() override {
    all_ = LoadManifests();
    deployment_ = TheOne(all_, "Deployment");
    ASSERT_TRUE(deployment_) << "deploy/ must hold exactly one Deployment";
    pod_ = deployment_["spec"]["template"]["spec"];
    ASSERT_EQ(pod_["containers"].size(), 1u);
    container_ = pod_["containers"][0];
    config_ = YAML::Load(EmbeddedConfig(all_));
    ASSERT_TRUE(config_["spec"]) << "the ConfigMap's config.yaml has no spec";
  }

  // The container port named `name`, or a number as is.
  int PortOf(const YAML::Node& port) const {
    if (port.as<std::string>("").find_first_not_of("0123456789") == std::string::npos) {
      return port.as<int>();
    }
    for (const YAML::Node& p : container_["ports"]) {
      if (p["name"].as<std::string>("") == port.as<std::string>()) {
        return p["containerPort"].as<int>();
      }
    }
    return -1;
  }

  YAML::Node Volume(const std::string& name) const {
    for (const YAML::Node& v : pod_["volumes"]) {
      if (v["name"].as<std::string>("") == name) return v;
    }
    return YAML::Node();
  }

  // The volume mounted at `dir` or at a parent of it, or null.
  YAML::Node VolumeHolding(const std::string& path, bool& read_only) const {
    for (const YAML::Node& m : container_["volumeMounts"]) {
      const std::string at = m["mountPath"].as<std::string>();
      const auto rel = fs::path(path).lexically_relative(at);
      if (!rel.empty() && rel.native().rfind("..", 0) != 0) {
        read_only = m["readOnly"].as<bool>(false);
        return Volume(m["name"].as<std::string>());
      }
    }
    return YAML::Node();
  }

  std::vector<Manifest> all_;
  YAML::Node deployment_, pod_, container_, config_;
};

TEST_F(DeployManifests, RunsTwoReplicasWithProbesOnTheServerPort) {
  EXPECT_EQ(deployment_["spec"]["replicas"].as<int>(0), 2);
  const int port = config_["spec"]["server"]["port"].as<int>(9464);
  EXPECT_EQ(config_["spec"]["server"]["host"].as<std::string>(""), "0.0.0.0")
      << "probes and Prometheus reach the pod by its IP, not loopback";
  struct Case {
    const char* probe;
    const char* path;
  };
  for (const Case& c : {Case{"livenessProbe", "/healthz"}, Case{"readinessProbe", "/readyz"}}) {
    SCOPED_TRACE(c.probe);
    const YAML::Node get = container_[c.probe]["httpGet"];
    ASSERT_TRUE(get);
    EXPECT_EQ(get["path"].as<std::string>(""), c.path);
    EXPECT_EQ(PortOf(get["port"]), port);
  }
}

TEST_F(DeployManifests, RunsUnprivilegedWithAReadOnlyRoot) {
  const YAML::Node sc = container_["securityContext"];
  EXPECT_TRUE(sc["readOnlyRootFilesystem"].as<bool>(false));
  EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>(true));
  EXPECT_TRUE(sc["runAsNonRoot"].as<bool>(false) ||
              pod_["securityContext"]["runAsNonRoot"].as<bool>(false));
  EXPECT_GT(pod_["securityContext"]["runAsUser"].as<int>(0), 0);
  EXPECT_EQ(sc["capabilities"]["drop"][0].as<std::string>(""), "ALL");
  for (const char* kind : {"requests", "limits"}) {
    for (const char* r : {"cpu", "memory"}) {
      EXPECT_TRUE(container_["resources"][kind][r]) << kind << "." << r;
    }
  }
}

TEST_F(DeployManifests, MountsTheConfigWhereTheCommandReadsIt) {
  std::vector<std::string> argv;
  for (const YAML::Node& a : container_["command"]) argv.push_back(a.as<std::string>());
  for (const YAML::Node& a : container_["args"]) argv.push_back(a.as<std::string>());
  auto c = std::find(argv.begin(), argv.end(), "-c");
  ASSERT_TRUE(c != argv.end() && c + 1 != argv.end()) << "aiscale run -c FILE";
  EXPECT_NE(std::find(argv.begin(), argv.end(), "run"), argv.end());
  const fs::path file(*(c + 1));
  bool read_only = false;
  const YAML::Node vol = VolumeHolding(file.string(), read_only);
  ASSERT_TRUE(vol) << "nothing mounted at " << file;
  const YAML::Node cm = TheOne(all_, "ConfigMap");
  EXPECT_EQ(vol["configMap"]["name"].as<std::string>(""), cm["metadata"]["name"].as<std::string>());
  EXPECT_TRUE(cm["data"][file.filename().string()]) << "the ConfigMap has no key " << file;
  EXPECT_EQ(cm["metadata"]["namespace"].as<std::string>(),
            deployment_["metadata"]["namespace"].as<std::string>());
}

TEST_F(DeployManifests, StoreAndRunDirAreOnAWritableEmptyDir) {
  const std::string store = config_["spec"]["store"].as<std::string>("");
  ASSERT_FALSE(store.empty());
  for (const std::string& path : {store, store + ".run/x"}) {  // the run dir: beside the store
    SCOPED_TRACE(path);
    bool read_only = true;
    const YAML::Node vol = VolumeHolding(path, read_only);
    ASSERT_TRUE(vol) << "the root filesystem is read-only; nothing writable holds " << path;
    EXPECT_TRUE(vol["emptyDir"]);
    EXPECT_FALSE(read_only);
  }
}

TEST_F(DeployManifests, RunsAsTheServiceAccountThatRbacBinds) {
  const std::string sa = pod_["serviceAccountName"].as<std::string>("");
  const std::string ns = deployment_["metadata"]["namespace"].as<std::string>("");
  bool defined = false;
  for (const Manifest& m : OfKind(all_, "ServiceAccount")) {
    defined |= m.Name() == sa && m.Namespace() == ns;
  }
  EXPECT_TRUE(defined) << "no ServiceAccount " << ns << "/" << sa;
  int bindings = 0;
  for (const Manifest& m : all_) {
    if (m.Kind() != "RoleBinding" && m.Kind() != "ClusterRoleBinding") continue;
    for (const YAML::Node& s : m.node["subjects"]) {
      bindings += s["name"].as<std::string>("") == sa && s["namespace"].as<std::string>("") == ns;
    }
  }
  EXPECT_GE(bindings, 3) << "scaler Role, capacity ClusterRole, leader-election Role";
  // The leader-election identity comes from the downward API.
  bool pod_name = false;
  for (const YAML::Node& e : container_["env"]) {
    pod_name |= e["name"].as<std::string>("") == "POD_NAME" &&
                e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>("") == "metadata.name";
  }
  EXPECT_TRUE(pod_name);
}

TEST_F(DeployManifests, ServiceSelectsThePodsOnTheMetricsPort) {
  const YAML::Node svc = TheOne(all_, "Service");
  ASSERT_TRUE(svc);
  const YAML::Node labels = deployment_["spec"]["template"]["metadata"]["labels"];
  for (const auto& kv : svc["spec"]["selector"]) {
    EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(""), kv.second.as<std::string>());
  }
  const int port = config_["spec"]["server"]["port"].as<int>(9464);
  ASSERT_EQ(svc["spec"]["ports"].size(), 1u);
  EXPECT_EQ(PortOf(svc["spec"]["ports"][0]["targetPort"]), port);
  EXPECT_EQ(svc["metadata"]["annotations"]["prometheus.io/port"].as<std::string>(""),
            std::to_string(svc["spec"]["ports"][0]["port"].as<int>()));
}

TEST_F(DeployManifests, EveryNamespaceUsedIsCreatedFirst) {
  std::set<std::string> created;
  std::string first_file;
  for (const Manifest& m : OfKind(all_, "Namespace")) {
    created.insert(m.Name());
    if (first_file.empty()) first_file = m.file;
  }
  EXPECT_EQ(first_file, all_.front().file) << "kubectl applies files by name: namespaces first";
  for (const Manifest& m : all_) {
    if (m.Namespace().empty()) continue;
    EXPECT_EQ(created.count(m.Namespace()), 1u)
        << m.file << " " << m.Kind() << " " << m.Name() << " in " << m.Namespace();
  }
  for (const YAML::Node& w : config_["spec"]["workloads"]) {
    const std::string ns = w["target"]["namespace"].as<std::string>("");
    if (!ns.empty()) {
      EXPECT_EQ(created.count(ns), 1u) << ns;
    }
  }
}

}  // namespace
}  // namespace aiscale::deploy_test
