// AIScalers end to end: the built `aiscale run` with `aiscalers:` against the wire-level
// FakeKubeApiServer (a fake: Debian ships no kube-apiserver; it serves the CRD from deploy/,
// enforcing its schema, and the watch), over HTTP on 127.0.0.1. One daemon, period 0.5 s, one
// config-file workload beside the objects. Checked: an object created is acted on and its
// status written (HPA's conditions); a spec the schema cannot catch is reported on the object
// with its field path and an Event, and nothing else is affected; a name the file uses is a
// conflict, not an override; a pin annotation; a deleted object's target keeps its size; the
// API server restarting with a change made while it was down; no status write while nothing
// changes. Waits are for conditions (up to 30 s), never fixed sleeps.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "cli/cli_test_util.h"
#include "fakes/fake_kube_apiserver.h"
#include "fakes/yaml_json.h"

namespace aiscale::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

bool WaitFor(const std::function<bool()>& done, double seconds = 30) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

json Static(const std::string& name, int replicas) {
  return {{"apiVersion", "aiscale.dev/v1alpha1"},
          {"kind", "AIScaler"},
          {"metadata", {{"name", name}, {"namespace", "ai"}}},
          {"spec",
           {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", name}}},
            {"min_replicas", 1},
            {"max_replicas", 8},
            {"policy", {{"name", "static"}, {"replicas", replicas}}}}}};
}

class AiScalerE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.Start());
    const YAML::Node crd =
        YAML::LoadFile(std::string(AISCALE_SOURCE_DIR) + "/deploy/06-aiscaler-crd.yaml");
    std::string error;
    ASSERT_TRUE(api_.AddCrd(testing::YamlToJson(crd), &error)) << error;
    for (const char* d : {"llm", "clash", "other", "late"}) api_.AddDeployment("ai", d, 2, 2);
    dir_ = fs::path(::testing::TempDir()) / ("aiscale_ais_e2e_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "kubeconfig") << testing::FakeKubeconfig(api_.Url());
    std::ofstream(dir_ / "aiscale.yaml")
        << "apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\nspec:\n"
           "  period: 0.5s\n  server: {enabled: false}\n"
           "  store: "
        << (dir_ / "store.db").string()
        << "\n  aiscalers:\n    namespaces: [ai]\n    auth: {kubeconfig: kubeconfig}\n"
           "    status: {qps: 100}\n"
           "  sources: [{name: prom, type: prometheus, url: 'http://127.0.0.1:1'}]\n"
           "  workloads:\n"
           "    - {name: clash, kind: Deployment, namespace: ai, policy: {name: static, "
           "replicas: 2},\n"
           "       target: {engine: kubernetes, kind: Deployment, auth: {kubeconfig: "
           "kubeconfig}}}\n";
  }
  void TearDown() override {
    Stop();
    if (HasFailure()) std::cerr << "aiscale's log:\n" << Log();
    fs::remove_all(dir_);
  }
  void Start() {
    pid_ = SpawnAiscale({"run", "-c", (dir_ / "aiscale.yaml").string()},
                        (dir_ / "aiscale.log").string());
    ASSERT_GT(pid_, 0);
  }
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 400 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, WNOHANG);
    pid_ = 0;
  }
  std::string Log() const {
    std::ifstream in(dir_ / "aiscale.log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Absent objects and fields read as empty ones: these are polled before they are written.
  static json MapAt(const json& j, const char* key) {
    const json v = j.is_object() ? j.value(key, json::object()) : json::object();
    return v.is_object() ? v : json::object();
  }
  int Replicas(const std::string& name) {
    return MapAt(api_.Object("apps", "deployments", "ai", name), "spec").value("replicas", -1);
  }
  json Status(const std::string& name) {
    return MapAt(api_.Object("aiscale.dev", "aiscalers", "ai", name), "status");
  }
  std::string Condition(const std::string& name, const std::string& type) {
    for (const json& c : Status(name).value("conditions", json::array())) {
      if (c.value("type", "") == type) {
        return c.value("status", "") + "/" + c.value("reason", "") + ": " + c.value("message", "");
      }
    }
    return "";
  }
  void Update(const std::string& name, const std::function<void(json&)>& edit) {
    json o = api_.Object("aiscale.dev", "aiscalers", "ai", name);
    edit(o);
    ASSERT_EQ(api_.UpdateCustom(o).first, 200);
  }
  int StatusWrites() {
    int n = 0;
    for (const auto& r : api_.Requests()) n += r.subresource == "status" && r.verb == "update";
    return n;
  }

  testing::FakeKubeApiServer api_;
  fs::path dir_;
  pid_t pid_ = 0;
};

TEST_F(AiScalerE2eTest, ObjectsDriveTheDaemonAndReportOnThemselves) {
  ASSERT_EQ(api_.CreateCustom(Static("llm", 3)).first, 201);
  Start();
  // Created before the start: acted on from the first ticks, with HPA-style status.
  ASSERT_TRUE(WaitFor([&] { return Replicas("llm") == 3; }));
  ASSERT_TRUE(WaitFor([&] { return Status("llm").value("currentReplicas", 0) == 3; }));
  EXPECT_EQ(Status("llm")["reference"], "Deployment/llm");
  EXPECT_EQ(Status("llm")["observedGeneration"], 1);
  EXPECT_EQ(Condition("llm", "ScalingActive").rfind("True/ValidMetricFound", 0), 0u);
  EXPECT_EQ(Condition("llm", "Paused").rfind("False/NotPaused", 0), 0u);

  // Created while running.
  ASSERT_EQ(api_.CreateCustom(Static("other", 4)).first, 201);
  ASSERT_TRUE(WaitFor([&] { return Replicas("other") == 4; }));

  // What the schema cannot catch: a signal from a source the config does not define.
  json bad = Static("bad", 2);
  bad["spec"]["policy"] = {{"name", "kpa"}, {"signal", "concurrency"}, {"target", 10}};
  bad["spec"]["signals"] = {{{"name", "concurrency"}, {"source", "nowhere"}}};
  ASSERT_EQ(api_.CreateCustom(bad).first, 201);
  ASSERT_TRUE(WaitFor([&] { return !Condition("bad", "ScalingActive").empty(); }));
  EXPECT_NE(Condition("bad", "ScalingActive").find("False/InvalidSpec: spec.signals[0].source"),
            std::string::npos)
      << Condition("bad", "ScalingActive");
  ASSERT_TRUE(WaitFor([&] {
    for (const json& e : api_.Events()) {
      if (e.value("reason", "") == "InvalidSpec" && e["involvedObject"].value("name", "") == "bad")
        return true;
    }
    return false;
  }));

  // A name the config file uses: a conflict on the object, the file's workload goes on.
  ASSERT_EQ(api_.CreateCustom(Static("clash", 6)).first, 201);
  ASSERT_TRUE(WaitFor([&] { return !Condition("clash", "ScalingActive").empty(); }));
  EXPECT_EQ(Condition("clash", "ScalingActive").rfind("False/NameConflict", 0), 0u);
  EXPECT_EQ(Replicas("clash"), 2);

  // A pin by annotation.
  Update("llm", [](json& o) {
    o["metadata"]["annotations"] = {{"aiscale.dev/paused-replicas", "5"}};
  });
  ASSERT_TRUE(WaitFor([&] { return Replicas("llm") == 5; }));
  ASSERT_TRUE(
      WaitFor([&] { return Condition("llm", "Paused").rfind("True/ReplicasPinned", 0) == 0; }));

  // Nothing changes: no status is written.
  ASSERT_TRUE(WaitFor([&] { return Status("llm").value("currentReplicas", 0) == 5; }));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the last writes land
  const int writes = StatusWrites();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // six ticks
  EXPECT_EQ(StatusWrites(), writes) << "status written without a change";

  // Deleted: no longer managed, its target keeps its size even when changed by hand.
  ASSERT_EQ(api_.DeleteCustom("aiscale.dev", "aiscalers", "ai", "llm").first, 200);
  ASSERT_TRUE(WaitFor([&] { return Log().find("ai/llm deleted") != std::string::npos; }));
  json d = api_.Object("apps", "deployments", "ai", "llm");
  d["spec"]["replicas"] = 7;
  api_.SetObject("apps", "deployments", "ai", "llm", d);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(Replicas("llm"), 7);

  // The API server restarts; a change made while it was down is applied after it returns.
  ASSERT_EQ(api_.CreateCustom(Static("late", 2)).first, 201);
  Clock::time_point back;
  std::thread restart([&] {
    ASSERT_TRUE(api_.Restart(std::chrono::milliseconds(2000)));
    back = Clock::now();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Update("late", [](json& o) { o["spec"]["policy"]["replicas"] = 6; });
  restart.join();
  ASSERT_TRUE(WaitFor([&] { return Replicas("late") == 6; }));
  std::printf(
      "[ figures ] change made while the API server was down applied %.2f s after it "
      "returned\n",
      std::chrono::duration<double>(Clock::now() - back).count());
}

// A pool read from Kubernetes (`pool: {from: kubernetes}`) with AIScaler workloads: the pods of
// what an AIScaler scales are aiscale's, not others', once the watch has listed it. Counted as
// others', llm's 2 pods would leave a pool of 2 on the 4-GPU node and the static 4 would be cut
// to 2; before this was supported the daemon refused the config.
TEST_F(AiScalerE2eTest, APoolFromKubernetesCountsTheAiScalersPodsAsAiscales) {
  api_.AddNode("gpu-a", 4);
  for (const char* pod : {"llm-6d4cf56db6-a", "llm-6d4cf56db6-b"}) {
    api_.AddPod("ai", pod, "gpu-a", 1);
    api_.SetPodOwner("ai", pod, "ReplicaSet", "llm-6d4cf56db6");
  }
  std::ofstream(dir_ / "aiscale.yaml")
      << "apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\nspec:\n"
         "  period: 0.5s\n  server: {enabled: false}\n"
         "  aiscalers: {namespaces: [ai], auth: {kubeconfig: kubeconfig}}\n"
         "  pool:\n    from: kubernetes\n    kubernetes: {auth: {kubeconfig: kubeconfig}}\n"
         "    tenants: [{name: ai, guaranteed: 4}]\n";
  ASSERT_EQ(api_.CreateCustom(Static("llm", 4)).first, 201);
  Start();
  ASSERT_TRUE(WaitFor([&] { return Replicas("llm") == 4; })) << "llm at " << Replicas("llm");
  EXPECT_EQ(Log().find("does not yet take AIScaler"), std::string::npos);
}

}  // namespace
}  // namespace aiscale::cli
