// KubernetesActuator against the wire-level FakeKubeApiServer over real HTTP (CurlHttpClient):
// Observe and Apply per kind, retries by error kind (409, 429 Retry-After, 5xx backoff within
// the deadline, timeouts), the API's messages for 404/403/401, events, the number of API calls
// per Observe/Apply, the verbs it needs (RBAC), and GPU capacity. Waits between retries go
// through a clock that records them and moves only when slept on, so no test waits for real.
#include "act/kubernetes_actuator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/curl_http_client.h"
#include "fakes/fake_kube_apiserver.h"

namespace aiscale::act {
namespace {

using nlohmann::json;
using testing::FakeKubeApiServer;

// Monotonic time that moves only on SleepUntil, recording each wait.
class SleepRecordingClock final : public Clock {
 public:
  TimePoint Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  WallTime WallNow() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return WallTime(Seconds(1796000000)) + now_.time_since_epoch();
  }
  void SleepUntil(TimePoint t) override {
    std::lock_guard<std::mutex> lock(mu_);
    sleeps_.push_back(t - now_);
    if (t > now_) now_ = t;
  }
  std::vector<Duration> sleeps() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }

 private:
  mutable std::mutex mu_;
  TimePoint now_ = AtSeconds(1000);
  std::vector<Duration> sleeps_;
};

class KubernetesActuatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    server_.AddDeployment("ai", "llm", 2, 2, 1);
    server_.AddStatefulSet("ai", "cache", 3, 1);
    server_.AddPyTorchJob("train", "llama", 4, 3, 8);
  }

  std::unique_ptr<KubernetesActuator> Make(const std::string& kind, const std::string& ns,
                                           const std::string& name, Duration timeout = Seconds(10),
                                           bool gpu_capacity = false) {
    KubernetesTargetConfig cfg;
    EXPECT_TRUE(ResourceForKind(kind, cfg.resource)) << kind;
    cfg.namespace_ = ns;
    cfg.name = name;
    cfg.gpu_capacity = gpu_capacity;
    KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    KubeClientOptions opts;
    opts.call_timeout = timeout;
    opts.attempt_timeout = Seconds(0.5);
    opts.seed = 7;
    return std::make_unique<KubernetesActuator>(
        cfg, std::make_unique<KubeClient>(ep, http_, clock_, opts), clock_,
        [this](const std::string& w) { warnings_.push_back(w); });
  }

  // Requests since the last ClearRequests, as "METHOD path".
  std::vector<std::string> Calls() const {
    std::vector<std::string> out;
    for (const auto& r : server_.Requests()) out.push_back(r.method + " " + r.path);
    return out;
  }

  FakeKubeApiServer server_;
  CurlHttpClient http_;
  SleepRecordingClock clock_;
  std::vector<std::string> warnings_;
  const WorkloadRef ref_{"InferenceService", "ai", "llm"};
};

TEST_F(KubernetesActuatorTest, ObservesSpecAndReadinessPerKind) {
  struct Case {
    const char* kind;
    const char* ns;
    const char* name;
    int current;
    int ready;
    std::string detail;
  };
  const std::vector<Case> cases = {
      {"Deployment", "ai", "llm", 2, 2, ""},
      {"StatefulSet", "ai", "cache", 3, 1, "1 of 3 replicas ready (status.readyReplicas)"},
      {"PyTorchJob", "train", "llama", 4, 3,
       "3 of 4 replicas ready (status.replicaStatuses.Worker.active)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    auto a = Make(c.kind, c.ns, c.name);
    server_.ClearRequests();
    Result<ScaleState> s = a->Observe(ref_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->current, c.current);
    EXPECT_EQ(s->ready, c.ready);
    EXPECT_EQ(s->detail, c.detail);
    EXPECT_FALSE(s->max_available.has_value());
    // O(1): the /scale and the object, nothing else (no pod listing).
    EXPECT_EQ(Calls(),
              (std::vector<std::string>{"GET " + a->ScalePath(), "GET " + a->ObjectPath()}));
  }
}

TEST_F(KubernetesActuatorTest, ReadinessComesFromStatusNotSpec) {
  auto a = Make("Deployment", "ai", "llm");
  json obj = server_.Object("apps", "deployments", "ai", "llm");
  obj["status"].erase("readyReplicas");  // the API server omits zero
  server_.SetObject("apps", "deployments", "ai", "llm", obj);
  Result<ScaleState> s = a->Observe(ref_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->current, 2);
  EXPECT_EQ(s->ready, 0);
}

TEST_F(KubernetesActuatorTest, AppliesWithMergePatchAndPostsAnEvent) {
  struct Case {
    const char* kind;
    const char* ns;
    const char* name;
    const char* group;
    const char* resource;
    int desired;
    json::json_pointer spec;
    std::string involved_kind;
  };
  const std::vector<Case> cases = {
      {"Deployment", "ai", "llm", "apps", "deployments", 5, json::json_pointer("/spec/replicas"),
       "Deployment"},
      {"StatefulSet", "ai", "cache", "apps", "statefulsets", 1,
       json::json_pointer("/spec/replicas"), "StatefulSet"},
      {"PyTorchJob", "train", "llama", "kubeflow.org", "pytorchjobs", 8,
       json::json_pointer("/spec/pytorchReplicaSpecs/Worker/replicas"), "PyTorchJob"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    auto a = Make(c.kind, c.ns, c.name);
    const int before = server_.Object(c.group, c.resource, c.ns, c.name).value(c.spec, -1);
    const size_t events_before = server_.Events().size();
    server_.ClearRequests();
    Status st = a->Apply(ref_, c.desired);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(server_.Object(c.group, c.resource, c.ns, c.name).value(c.spec, -1), c.desired);
    const auto reqs = server_.Requests();
    ASSERT_EQ(reqs.size(), 3u);  // GET scale, PATCH scale, POST event
    EXPECT_EQ(reqs[1].method, "PATCH");
    EXPECT_EQ(reqs[1].content_type, "application/merge-patch+json");
    EXPECT_EQ(json::parse(reqs[1].body), (json{{"spec", {{"replicas", c.desired}}}}));
    ASSERT_EQ(server_.Events().size(), events_before + 1);
    const json ev = server_.Events().back();
    EXPECT_EQ(ev["reason"], "AiscaleRescale");
    EXPECT_EQ(ev["type"], "Normal");
    EXPECT_EQ(ev["message"], std::to_string(before) + " → " + std::to_string(c.desired));
    EXPECT_EQ(ev["involvedObject"]["kind"], c.involved_kind);
    EXPECT_EQ(ev["involvedObject"]["name"], c.name);
    EXPECT_EQ(ev["involvedObject"]["namespace"], c.ns);
    EXPECT_EQ(ev["involvedObject"]["uid"],
              server_.Object(c.group, c.resource, c.ns, c.name)["metadata"]["uid"]);
    EXPECT_EQ(ev["source"]["component"], "aiscale");
  }
}

// A PyTorchJob the training operator marked Succeeded (kubeflow.org/v1 JobStatus, as its
// PyTorchJob controller writes it when the workers finished) is completed; while it runs, or
// when its last condition is Failed or Succeeded is "False", it is not. Served by the wire-level
// fake API server (Debian has no kube-apiserver), in the operator's own status format.
TEST_F(KubernetesActuatorTest, PyTorchJobStatusSucceededIsCompleted) {
  const json running = {{"type", "Running"}, {"status", "True"}, {"reason", "JobRunning"}};
  const json stopped = {{"type", "Running"}, {"status", "False"}, {"reason", "JobRunning"}};
  const json succeeded = {{"type", "Succeeded"},
                          {"status", "True"},
                          {"reason", "JobSucceeded"},
                          {"message", "PyTorchJob train/llama successfully completed."},
                          {"lastTransitionTime", "2026-12-01T12:00:00Z"}};
  json not_yet = succeeded;
  not_yet["status"] = "False";
  const json failed = {{"type", "Failed"}, {"status", "True"}, {"reason", "JobFailed"}};
  struct Case {
    std::string name;
    json conditions;
    bool completed;
  };
  const std::vector<Case> cases = {
      {"running", json::array({running}), false},
      {"succeeded", json::array({stopped, succeeded}), true},
      {"Succeeded but False", json::array({running, not_yet}), false},
      {"failed", json::array({stopped, failed}), false},
      {"no conditions yet", json::array(), false},
  };
  auto a = Make("PyTorchJob", "train", "llama");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json obj = server_.Object("kubeflow.org", "pytorchjobs", "train", "llama");
    obj["status"]["conditions"] = c.conditions;
    if (c.completed) {
      obj["status"]["replicaStatuses"]["Worker"] = {{"succeeded", 4}};
      obj["status"]["completionTime"] = "2026-12-01T12:00:00Z";
    }
    server_.SetObject("kubeflow.org", "pytorchjobs", "train", "llama", obj);
    const Result<ScaleState> s = a->Observe(ref_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->completed, c.completed) << s->detail;
    EXPECT_EQ(s->current, 4);
    if (c.completed) {
      EXPECT_EQ(s->detail,
                "status condition Succeeded: PyTorchJob train/llama successfully completed.");
    }
  }
}

TEST_F(KubernetesActuatorTest, CustomResourceReadsItsReadyPath) {
  const json pool = {{"apiVersion", "serving.example.com/v1"},
                     {"kind", "Pool"},
                     {"metadata", {{"name", "p"}, {"namespace", "ai"}, {"uid", "u-1"}}},
                     {"spec", {{"replicas", 3}, {"selector", {{"matchLabels", {{"app", "p"}}}}}}},
                     {"status", {{"replicas", 3}, {"serving", {{"ready", 2}, {"note", "x"}}}}}};
  server_.SetObject("serving.example.com", "pools", "ai", "p", pool);
  struct Case {
    std::string ready_path;
    bool ok;
    int ready;
  };
  for (const Case& c : std::vector<Case>{
           {"serving.ready", true, 2}, {"serving.absent", true, 0}, {"serving.note", false, 0}}) {
    SCOPED_TRACE(c.ready_path);
    KubernetesTargetConfig cfg;
    cfg.resource = {"serving.example.com", "v1", "pools", "Pool", c.ready_path};
    cfg.namespace_ = "ai";
    cfg.name = "p";
    KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    KubernetesActuator a(cfg, std::make_unique<KubeClient>(ep, http_, clock_, KubeClientOptions{}),
                         clock_, nullptr);
    EXPECT_EQ(a.ObjectPath(), "/apis/serving.example.com/v1/namespaces/ai/pools/p");
    Result<ScaleState> s = a.Observe(ref_);
    ASSERT_EQ(s.ok(), c.ok) << s.status().message();
    if (s.ok()) {
      EXPECT_EQ(s->current, 3);
      EXPECT_EQ(s->ready, c.ready);
    } else {
      EXPECT_NE(s.status().message().find("status.serving.note is not an integer"),
                std::string::npos)
          << s.status().message();
    }
  }
}

TEST_F(KubernetesActuatorTest, ApplyingTheCurrentSizeIsOneReadAndNoWrite) {
  auto a = Make("Deployment", "ai", "llm");
  server_.ClearRequests();
  ASSERT_TRUE(a->Apply(ref_, 2).ok());
  EXPECT_EQ(Calls(), (std::vector<std::string>{"GET " + a->ScalePath()}));
  EXPECT_TRUE(server_.Events().empty());
}

TEST_F(KubernetesActuatorTest, ConflictIsReReadAndRetriedOnce) {
  auto a = Make("Deployment", "ai", "llm");
  server_.InjectFault("PATCH", a->ScalePath(), {409, 1});
  server_.ClearRequests();
  Status st = a->Apply(ref_, 4);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(server_.Object("apps", "deployments", "ai", "llm")["spec"]["replicas"], 4);
  EXPECT_EQ(Calls(), (std::vector<std::string>{"GET " + a->ScalePath(), "PATCH " + a->ScalePath(),
                                               "GET " + a->ScalePath(), "PATCH " + a->ScalePath(),
                                               "POST /api/v1/namespaces/ai/events"}));

  server_.InjectFault("PATCH", a->ScalePath(), {409, 2});  // twice: give up with the reason
  st = a->Apply(ref_, 6);
  EXPECT_TRUE(st.IsConflict()) << st.message();
  EXPECT_NE(st.message().find("the object has been modified"), std::string::npos) << st.message();
  EXPECT_EQ(server_.Object("apps", "deployments", "ai", "llm")["spec"]["replicas"], 4);
}

TEST_F(KubernetesActuatorTest, TooManyRequestsWaitsForRetryAfter) {
  auto a = Make("Deployment", "ai", "llm");
  FakeKubeApiServer::Fault f{429, 1, 3};
  server_.InjectFault("GET", a->ScalePath(), f);
  Result<ScaleState> s = a->Observe(ref_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(clock_.sleeps(), (std::vector<Duration>{Seconds(3)}));

  // A Retry-After past the call's deadline: no wait, an Unavailable error that says so.
  auto short_deadline = Make("Deployment", "ai", "llm", Seconds(2));
  server_.InjectFault("GET", a->ScalePath(), {429, 1, 30});
  s = short_deadline->Observe(ref_);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsUnavailable()) << s.status().message();
  EXPECT_NE(s.status().message().find("retry after 30 s"), std::string::npos)
      << s.status().message();
  EXPECT_EQ(clock_.sleeps().size(), 1u);
}

TEST_F(KubernetesActuatorTest, ServerErrorsBackOffWithinTheDeadline) {
  auto a = Make("Deployment", "ai", "llm", Seconds(10));
  server_.InjectFault("GET", a->ScalePath(), {500, 3});
  Result<ScaleState> s = a->Observe(ref_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::vector<Duration> sleeps = clock_.sleeps();
  ASSERT_EQ(sleeps.size(), 3u);
  // Exponential with jitter: attempt k waits within [d/2, d] for d = 100 ms * 2^k.
  for (size_t k = 0; k < sleeps.size(); ++k) {
    const Duration d = Seconds(0.1) * (1 << k);
    EXPECT_GE(sleeps[k], d / 2) << k;
    EXPECT_LE(sleeps[k], d) << k;
  }

  // A server that keeps failing: the call ends by its deadline, having waited less than it.
  auto b = Make("Deployment", "ai", "llm", Seconds(3));
  server_.InjectFault("GET", b->ScalePath(), {503, 1000});
  const TimePoint start = clock_.Now();
  s = b->Observe(ref_);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsUnavailable()) << s.status().message();
  EXPECT_NE(s.status().message().find("the server is currently unable to handle the request"),
            std::string::npos)
      << s.status().message();
  EXPECT_LE(clock_.Now() - start, Seconds(3));
  EXPECT_GE(clock_.sleeps().size(), 4u);  // it did retry
}

TEST_F(KubernetesActuatorTest, TimeoutsAreRetried) {
  auto a = Make("Deployment", "ai", "llm");
  FakeKubeApiServer::Fault hang;
  hang.hang = true;
  hang.hang_ms = 1500;  // past the 0.5 s attempt timeout
  server_.InjectFault("GET", a->ScalePath(), hang);
  Result<ScaleState> s = a->Observe(ref_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->current, 2);
  EXPECT_EQ(clock_.sleeps().size(), 1u);
}

TEST_F(KubernetesActuatorTest, NotFoundAndForbiddenCarryTheApiMessage) {
  struct Case {
    const char* name;
    int status;
    bool apply;
    StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"404 on observe", 404, false, StatusCode::kNotFound,
       "HTTP 404: deployments.apps \"llm\" not found"},
      {"403 on apply", 403, true, StatusCode::kPermissionDenied,
       "HTTP 403: deployments.apps \"llm\" is forbidden: User \"system:serviceaccount:ai:aiscale\" "
       "cannot patch resource \"deployments/scale\" in API group \"apps\" in the namespace \"ai\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto a = Make("Deployment", "ai", "llm");
    server_.InjectFault(c.apply ? "PATCH" : "GET", a->ScalePath(), {c.status, 1});
    const Status st = c.apply ? a->Apply(ref_, 7) : a->Observe(ref_).status();
    EXPECT_EQ(st.code(), c.code) << st.message();
    EXPECT_NE(st.message().find(c.message), std::string::npos) << st.message();
    EXPECT_TRUE(clock_.sleeps().empty());  // not retried
  }
  auto missing = Make("Deployment", "ai", "nope");
  Result<ScaleState> s = missing->Observe(ref_);
  EXPECT_TRUE(s.status().IsNotFound()) << s.status().message();
  EXPECT_NE(s.status().message().find("deployments.apps \"nope\" not found"), std::string::npos);
}

TEST_F(KubernetesActuatorTest, WrongTokenIsPermissionDeniedWithoutTheToken) {
  auto a = Make("Deployment", "ai", "llm");
  server_.SetToken("another-token");
  Result<ScaleState> s = a->Observe(ref_);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsPermissionDenied()) << s.status().message();
  EXPECT_NE(s.status().message().find("HTTP 401: Unauthorized"), std::string::npos);
  EXPECT_EQ(s.status().message().find("fake-token"), std::string::npos);
}

TEST_F(KubernetesActuatorTest, NegativeReplicasAreInvalidBeforeAnyCall) {
  auto a = Make("Deployment", "ai", "llm");
  server_.ClearRequests();
  EXPECT_TRUE(a->Apply(ref_, -1).IsInvalid());
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(KubernetesActuatorTest, NeedsOnlyTheseVerbs) {
  auto a = Make("PyTorchJob", "train", "llama", Seconds(10), /*gpu_capacity=*/true);
  server_.ClearRequests();
  ASSERT_TRUE(a->Observe(ref_).ok());
  ASSERT_TRUE(a->Apply(ref_, 5).ok());
  std::set<std::string> rules;
  for (const auto& r : server_.Requests()) {
    rules.insert(r.verb + " " + r.group + "/" + r.resource +
                 (r.subresource.empty() ? "" : "/" + r.subresource));
  }
  EXPECT_EQ(rules, (std::set<std::string>{"get kubeflow.org/pytorchjobs",
                                          "get kubeflow.org/pytorchjobs/scale",
                                          "patch kubeflow.org/pytorchjobs/scale", "list /nodes",
                                          "list /pods", "create /events"}));
}

TEST_F(KubernetesActuatorTest, GpuCapacityGivesMaxAvailable) {
  // 8-GPU workers; node a: 8 free; node b: 16 - 8 used by a running pod = 8 free (one slot);
  // node c: not ready; node d: 8 held by a finished pod (free again) -> 3 more workers.
  server_.AddNode("a", 8);
  server_.AddNode("b", 16);
  server_.AddNode("c", 8, /*ready=*/false);
  server_.AddNode("d", 8);
  server_.AddPod("train", "w-0", "b", 8);
  server_.AddPod("train", "old", "d", 8, "Succeeded");
  auto a = Make("PyTorchJob", "train", "llama", Seconds(10), /*gpu_capacity=*/true);
  server_.ClearRequests();
  Result<ScaleState> s = a->Observe(ref_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->max_available.has_value()) << s->detail;
  EXPECT_EQ(*s->max_available, 4 + 3);
  EXPECT_EQ(server_.Requests().size(), 4u);  // scale, object, nodes, pods: once per Observe

  // A deployment whose pods ask for no GPU: capacity unknown, said in the detail.
  auto d = Make("StatefulSet", "ai", "cache", Seconds(10), true);
  s = d->Observe(ref_);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->max_available.has_value());
  EXPECT_NE(s->detail.find("gpu_capacity"), std::string::npos) << s->detail;
}

TEST(KubernetesGpuCapacity, CountsWholeReplicasPerNode) {
  const json nodes = json::parse(R"({"items":[
    {"metadata":{"name":"n1"},"status":{"allocatable":{"nvidia.com/gpu":"8"},
     "conditions":[{"type":"Ready","status":"True"}]}},
    {"metadata":{"name":"n2"},"spec":{"unschedulable":true},
     "status":{"allocatable":{"nvidia.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}},
    {"metadata":{"name":"n3"},"status":{"allocatable":{"nvidia.com/gpu":"4"},
     "conditions":[{"type":"Ready","status":"True"}]}}]})");
  const json pods = json::parse(R"({"items":[
    {"spec":{"nodeName":"n1","containers":[{"resources":{"requests":{"nvidia.com/gpu":"3"}}}]},
     "status":{"phase":"Running"}},
    {"spec":{"nodeName":"n3","containers":[{"resources":{"limits":{"nvidia.com/gpu":1}}}]},
     "status":{"phase":"Pending"}}]})");
  struct Case {
    int per_replica;
    int want;
  };
  // n1: 5 free, n2: cordoned, n3: 3 free.
  for (const Case& c : std::vector<Case>{{1, 8}, {2, 3}, {4, 1}, {8, 0}, {0, 0}}) {
    SCOPED_TRACE(c.per_replica);
    EXPECT_EQ(FreeReplicaSlots(nodes, pods, c.per_replica), c.want);
  }
}

TEST_F(KubernetesActuatorTest, FactoryDefaultsToTheWorkloadsNamespaceAndName) {
  const std::string dir = ::testing::TempDir() + "aiscale-kfac-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir + "/config");
    out << "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
           "clusters: [{name: c, cluster: {server: '"
        << server_.Url()
        << "'}}]\n"
           "contexts: [{name: t, context: {cluster: c, user: u}}]\n"
           "users: [{name: u, user: {token: fake-token}}]\n";
  }
  server_.AddDeployment("default", "web", 1, 1);
  BuildEnv env;
  env.clock = &clock_;
  env.http = &http_;
  KubeAuthEnv auth;
  auth.getenv = [dir](const std::string& n) {
    return n == "KUBECONFIG" ? std::optional<std::string>(dir + "/config") : std::nullopt;
  };
  struct Case {
    WorkloadRef ref;
    int want_current;
  };
  for (const Case& c : std::vector<Case>{{{"InferenceService", "ai", "llm"}, 2},
                                         {{"InferenceService", "", "web"}, 1}}) {
    SCOPED_TRACE(c.ref.Key());
    KubernetesTargetConfig cfg;
    ASSERT_TRUE(ResourceForKind("Deployment", cfg.resource));
    Result<std::unique_ptr<Actuator>> a = MakeKubernetesActuator(c.ref, cfg, env, auth);
    ASSERT_TRUE(a.ok()) << a.status().message();
    Result<ScaleState> s = (*a)->Observe(c.ref);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->current, c.want_current);
  }
  std::filesystem::remove_all(dir);
}

TEST(KubernetesActuatorFactory, ResolvesNamespaceAndNameFromTheWorkload) {
  CurlHttpClient http;
  SleepRecordingClock clock;
  BuildEnv env;
  env.clock = &clock;
  env.http = &http;
  KubeAuthEnv auth;
  auth.getenv = [](const std::string&) { return std::optional<std::string>(); };
  auth.in_cluster.token_file = "/nonexistent/token";
  KubernetesTargetConfig cfg;
  ASSERT_TRUE(ResourceForKind("Deployment", cfg.resource));
  cfg.auth.mode = KubeAuthConfig::Mode::kInCluster;
  Result<std::unique_ptr<Actuator>> a =
      MakeKubernetesActuator({"InferenceService", "ai", "llm"}, cfg, env, auth);
  ASSERT_FALSE(a.ok());  // not in a pod: a clear startup error
  EXPECT_TRUE(a.status().IsNotFound()) << a.status().message();
  EXPECT_NE(a.status().message().find("kubernetes target of ai/llm"), std::string::npos);
  EXPECT_NE(a.status().message().find("KUBERNETES_SERVICE_HOST"), std::string::npos);

  Result<std::unique_ptr<Actuator>> bad =
      MakeKubernetesActuator({"InferenceService", "", "Bad_Name"}, cfg, env, auth);
  EXPECT_TRUE(bad.status().IsInvalid()) << bad.status().message();
}

}  // namespace
}  // namespace aiscale::act
