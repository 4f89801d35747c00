// The shipped elastic PyTorchJob example (examples/elastic/pytorchjob.yaml) scaled by the
// Kubernetes actuator built from the shipped controller config
// (examples/elastic/aiscale-kubernetes.yaml), through /scale on the wire-level fake API server:
// the bounds agree with the job's elasticPolicy, each rescale lands in
// spec.pytorchReplicaSpecs.Worker.replicas, and nothing else of the job changes.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <mutex>
#include <string>

#include "act/kubernetes_actuator.h"
#include "core/config/config_node.h"
#include "core/curl_http_client.h"
#include "fakes/fake_kube_apiserver.h"

namespace aiscale::act {
namespace {

using nlohmann::json;

const std::string kExamples = std::string(AISCALE_SOURCE_DIR) + "/examples/elastic/";

// Numbers stay numbers, everything else scalar is a string (as the API server would store the
// manifest after defaulting; enough for what this test compares).
json ToJson(const YAML::Node& n) {
  if (n.IsMap()) {
    json j = json::object();
    for (const auto& kv : n) j[kv.first.as<std::string>()] = ToJson(kv.second);
    return j;
  }
  if (n.IsSequence()) {
    json j = json::array();
    for (const auto& v : n) j.push_back(ToJson(v));
    return j;
  }
  if (n.IsScalar() && n.Tag() != "!") {  // a quoted scalar ("1") stays a string
    try {
      size_t used = 0;
      const long v = std::stol(n.Scalar(), &used);
      if (used == n.Scalar().size()) return v;
    } catch (const std::exception&) {
    }
  }
  return n.IsScalar() ? json(n.Scalar()) : json();
}

class FixedClock final : public Clock {
 public:
  TimePoint Now() const override { return AtSeconds(1000); }
  WallTime WallNow() const override { return WallTime(Seconds(1796000000)); }
  void SleepUntil(TimePoint) override {}
};

TEST(PyTorchJobExample, ScaledThroughScaleWithinItsElasticPolicy) {
  const YAML::Node job = YAML::LoadFile(kExamples + "pytorchjob.yaml");
  ASSERT_EQ(job["kind"].as<std::string>(), "PyTorchJob");
  ASSERT_EQ(job["apiVersion"].as<std::string>(), "kubeflow.org/v1");
  const std::string ns = job["metadata"]["namespace"].as<std::string>();
  const std::string name = job["metadata"]["name"].as<std::string>();
  const YAML::Node elastic = job["spec"]["elasticPolicy"];
  EXPECT_EQ(elastic["rdzvBackend"].as<std::string>(), "c10d");

  // The controller config's workload: its bounds are the job's, its target is the job.
  config::ConfigErrors errors;
  const config::ConfigNode root =
      config::LoadConfigFile(kExamples + "aiscale-kubernetes.yaml", errors);
  const config::ConfigNode workload = root.Child("spec").Child("workloads").Items().at(0);
  EXPECT_EQ(workload.Int("min_replicas", -1), elastic["minReplicas"].as<int>());
  EXPECT_EQ(workload.Int("max_replicas", -1), elastic["maxReplicas"].as<int>());
  const KubernetesTargetConfig target = KubernetesTargetConfig::Parse(workload.Child("target"));
  ASSERT_TRUE(errors.empty()) << errors.ToStatus().message();
  EXPECT_EQ(target.resource.resource, "pytorchjobs");
  EXPECT_EQ(target.namespace_, ns);
  EXPECT_EQ(target.name, name);

  testing::FakeKubeApiServer server;
  ASSERT_TRUE(server.Start());
  const int initial = job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"].as<int>();
  server.AddPyTorchJob(ns, name, initial, initial);
  json stored = server.Object("kubeflow.org", "pytorchjobs", ns, name);
  stored["spec"] = ToJson(job["spec"]);  // the manifest as applied
  server.SetObject("kubeflow.org", "pytorchjobs", ns, name, stored);

  CurlHttpClient http;
  FixedClock clock;
  KubeEndpoint ep;
  ep.server = server.Url();
  ep.token = "fake-token";
  KubernetesActuator actuator(target,
                              std::make_unique<KubeClient>(ep, http, clock, KubeClientOptions{}),
                              clock, [](const std::string&) {});
  const WorkloadRef ref{"TrainingJob", ns, name};
  auto seen = actuator.Observe(ref);
  ASSERT_TRUE(seen.ok()) << seen.status().message();
  EXPECT_EQ(seen->current, initial);
  EXPECT_EQ(seen->ready, initial);

  const std::string scale_path =
      "/apis/kubeflow.org/v1/namespaces/" + ns + "/pytorchjobs/" + name + "/scale";
  for (int desired : {2, 3, 1}) {
    SCOPED_TRACE(desired);
    server.ClearRequests();
    ASSERT_TRUE(actuator.Apply(ref, desired).ok());
    bool patched = false;
    for (const auto& r : server.Requests()) patched |= r.method == "PATCH" && r.path == scale_path;
    EXPECT_TRUE(patched);
    const json now = server.Object("kubeflow.org", "pytorchjobs", ns, name);
    EXPECT_EQ(now["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], desired);
    json rest = now["spec"];
    rest["pytorchReplicaSpecs"]["Worker"].erase("replicas");
    json want = stored["spec"];
    want["pytorchReplicaSpecs"]["Worker"].erase("replicas");
    EXPECT_EQ(rest, want);  // elasticPolicy, template and the rest untouched
    auto after = actuator.Observe(ref);
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(after->current, desired);
  }
}

}  // namespace
}  // namespace aiscale::act
