// Leader election end to end: two real `aiscale run` processes (the built binary) elect a leader
// through a Lease on one API server and scale one Deployment; only the leader may PATCH its
// /scale, and when the leader dies the other takes over.
//
// The API server is FakeKubeApiServer (tests/fakes), started in this test process over HTTPS
// with a CA made by openssl (plain HTTP if openssl is missing): Debian ships no kube-apiserver
// (nor etcd) to run here, so the fake serves the real wire format for Leases,
// Deployments' /scale, Events and Status bodies, with optimistic concurrency on
// resourceVersion. Each daemon authenticates with its own bearer token, so the fake records
// which daemon sent every request and, with it, who held the Lease when it arrived.
//
// Timings are the defaults (15 s lease, 10 s renew deadline, 2 s retry), so the SIGKILL case
// waits out a real lease. The failover times and the API calls per tick are printed
// ("[ figures ]" lines); run with --gtest_repeat=N for a median.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "cli/controller_config.h"
#include "cli/test_pki.h"
#include "fakes/fake_kube_apiserver.h"

namespace aiscale::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kLease = "ai/aiscale";
constexpr double kLeaseDurationS = 15;
constexpr double kRetryPeriodS = 2;
// A follower's steps are a retry period plus up to 1.2 of one apart (client-go's jitter).
constexpr double kFollowerStepS = 2.2 * kRetryPeriodS;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One `aiscale run --verbose` with identity `id`, its own kubeconfig (token "token-<id>"), store
// and log. The destructor kills it by PID if it still runs.
class Daemon {
 public:
  Daemon(const std::string& id, const std::string& server_url, const std::string& ca_file)
      : id_(id),
        dir_(fs::path(::testing::TempDir()) /
             ("aiscale_le_" + id + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "kubeconfig")
        << "apiVersion: v1\nkind: Config\n"
           "clusters:\n- name: fake\n  cluster: {server: '"
        << server_url << "'"
        << (ca_file.empty() ? "" : ", certificate-authority: '" + ca_file + "'")
        << "}\n"
           "users:\n- name: "
        << id << "\n  user: {token: token-" << id
        << "}\n"
           "contexts:\n- name: fake\n  context: {cluster: fake, user: "
        << id << "}\ncurrent-context: fake\n";
    std::ofstream(dir_ / "aiscale.yaml")
        << "apiVersion: aiscale.dev/v1alpha1\n"
           "kind: ControllerConfig\n"
           "spec:\n"
           "  period: 0.5s\n"
           "  store: "
        << (dir_ / "store.db").string()
        << "\n"
           "  server: {port: 0}\n"
           "  leader_election:\n"
           "    namespace: ai\n"
           "    name: aiscale\n"
           "    identity: "
        << id
        << "\n"
           "    auth: {kubeconfig: kubeconfig}\n"
           "  workloads:\n"
           "    - name: llm\n"
           "      kind: Deployment\n"
           "      namespace: ai\n"
           "      min_replicas: 1\n"
           "      max_replicas: 4\n"
           "      behavior:\n"
           "        scaleUp:\n"
           "          stabilizationWindowSeconds: 0\n"
           "          policies: [{type: Pods, value: 100, periodSeconds: 1}]\n"
           "      policy: {name: static, replicas: 3}\n"
           "      target: {engine: kubernetes, kind: Deployment, auth: {kubeconfig: kubeconfig}}\n";
  }
  ~Daemon() {
    Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start() {
    pid_ = SpawnAiscale({"run", "-c", (dir_ / "aiscale.yaml").string(), "--verbose"},
                        (dir_ / "aiscale.log").string());
  }
  void Kill(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
    if (sig == SIGKILL) Reap(std::chrono::seconds(5));
  }
  // The exit code, or -1 when it did not exit within `limit` (then it is killed) or was killed.
  int Reap(std::chrono::seconds limit) {
    if (pid_ <= 0) return -1;
    const auto until = Clock::now() + limit;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > until) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = 0;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string log() const { return ReadText(dir_ / "aiscale.log"); }
  // The port its HTTP server logged, 0 before it did.
  int port() const {
    std::smatch m;
    const std::string l = log();
    static const std::regex re("serving .* on 127\\.0\\.0\\.1:([0-9]+)");
    return std::regex_search(l, m, re) ? std::stoi(m[1]) : 0;
  }
  const std::string& id() const { return id_; }

 private:
  std::string id_;
  fs::path dir_;
  pid_t pid_ = 0;
};

class LeaderElectionE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::FakeKubeApiServer::Options opts;
    std::string ca;
    pki_ = std::make_unique<Pki>("aiscale_le_pki");
    if (pki_->Make()) {  // HTTPS with a self-signed CA, as a cluster serves it
      opts.cert_file = pki_->Path("server.pem");
      opts.key_file = pki_->Path("server.key");
      ca = pki_->Path("ca.pem");
    } else {
      std::printf("openssl failed or is missing: the fake serves plain HTTP\n");
    }
    server_ = std::make_unique<testing::FakeKubeApiServer>(opts);
    ASSERT_TRUE(server_->Start());
    server_->AddToken("token-a", "a");
    server_->AddToken("token-b", "b");
    server_->AddDeployment("ai", "llm", 1, 1);
    a_ = std::make_unique<Daemon>("a", server_->Url(), ca);
    b_ = std::make_unique<Daemon>("b", server_->Url(), ca);
    // Someone keeps scaling the Deployment back to 1, so the leader PATCHes it every tick or
    // two and a second applier would show at once.
    drift_ = std::thread([this] {
      while (!stop_drift_) {
        json d = server_->Object("apps", "deployments", "ai", "llm");
        if (d.is_object() && drifting_) {
          d["spec"]["replicas"] = 1;
          server_->SetObject("apps", "deployments", "ai", "llm", d);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    });
  }
  void TearDown() override {
    stop_drift_ = true;
    if (drift_.joinable()) drift_.join();
  }

  std::string Holder() const {
    const json l = server_->Lease("ai", "aiscale");
    return l.is_object() ? l["spec"].value("holderIdentity", "") : "";
  }
  std::map<std::string, int> PatchesBy() const {
    std::map<std::string, int> out;
    for (const auto& r : server_->Requests()) {
      if (r.method == "PATCH" && r.subresource == "scale") out[r.user]++;
    }
    return out;
  }
  // Every PATCH of /scale came from the daemon that held the Lease when it arrived.
  void ExpectOnlyTheHolderPatched() const {
    int patches = 0;
    for (const auto& r : server_->Requests()) {
      if (r.method != "PATCH") continue;
      ++patches;
      auto it = r.lease_holders.find(kLease);
      ASSERT_NE(it, r.lease_holders.end());
      EXPECT_EQ(r.user, it->second)
          << "a PATCH from " << r.user << " while " << it->second << " held the lease";
    }
    EXPECT_GT(patches, 0);
  }
  std::string Get(int port, const std::string& path, int* status) const {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(2);
    auto r = c.Get(path);
    *status = r ? r->status : 0;
    return r ? r->body : "";
  }

  // Starts both, lets the leader scale for a while, checks who leads as the API and /metrics
  // see it, then stops the leader with `sig` and returns how long until the other held the
  // Lease (negative when it never did within `limit_s`).
  double Failover(int sig, double limit_s) {
    a_->Start();
    b_->Start();
    EXPECT_TRUE(WaitFor([&] { return !Holder().empty(); }, 10)) << a_->log() << b_->log();
    Daemon& leader = Holder() == "a" ? *a_ : *b_;
    Daemon& follower = Holder() == "a" ? *b_ : *a_;
    EXPECT_TRUE(WaitFor([&] { return PatchesBy()[leader.id()] >= 2; }, 10)) << leader.log();
    EXPECT_TRUE(WaitFor([&] { return follower.port() > 0; }, 5));
    CheckReadApi(leader, 1);
    CheckReadApi(follower, 0);
    // Its first step may have lost the create race before it could read who won: give it one
    // more retry period to name the leader.
    const std::string says = "not leader (leader: " + leader.id() + ")";
    EXPECT_TRUE(WaitFor([&] { return follower.log().find(says) != std::string::npos; }, 5))
        << follower.log();
    EXPECT_EQ(PatchesBy()[follower.id()], 0);

    const auto killed = Clock::now();
    leader.Kill(sig);
    if (!WaitFor([&] { return Holder() == follower.id(); }, limit_s)) return -1;
    const double took = Since(killed);
    if (sig == SIGTERM) {
      EXPECT_EQ(leader.Reap(std::chrono::seconds(10)), 0) << leader.log();
    }
    const int before = PatchesBy()[follower.id()];
    EXPECT_TRUE(WaitFor([&] { return PatchesBy()[follower.id()] > before; }, 5)) << follower.log();
    follower.Kill(SIGTERM);
    EXPECT_EQ(follower.Reap(std::chrono::seconds(10)), 0) << follower.log();
    EXPECT_NE(follower.log().find("became leader"), std::string::npos) << follower.log();
    ExpectOnlyTheHolderPatched();
    return took;
  }
  void CheckReadApi(const Daemon& d, int leader) const {
    SCOPED_TRACE(d.id());
    int status = 0;
    Get(d.port(), "/readyz", &status);
    EXPECT_EQ(status, 200);  // a follower serves the read API too
    const std::string metrics = Get(d.port(), "/metrics", &status);
    EXPECT_EQ(status, 200);
    EXPECT_NE(metrics.find("\naiscale_leader " + std::to_string(leader) + "\n"), std::string::npos)
        << metrics;
  }

  std::unique_ptr<Pki> pki_;
  std::unique_ptr<testing::FakeKubeApiServer> server_;
  std::unique_ptr<Daemon> a_, b_;
  std::thread drift_;
  std::atomic<bool> stop_drift_{false};
  std::atomic<bool> drifting_{true};
};

TEST_F(LeaderElectionE2E, SigkillTheLeaderAndTheOtherTakesOverWhenTheLeaseRunsOut) {
  const double took = Failover(SIGKILL, kLeaseDurationS + 2 * kFollowerStepS + 5);
  ASSERT_GE(took, 0) << "the follower never took the lease over";
  std::printf("[ figures  ] leader failover after SIGKILL: %.2f s (lease %g s, retry %g s)\n", took,
              kLeaseDurationS, kRetryPeriodS);
  // The follower times the lease from its first step that saw the last renewal (the renewal
  // came at most a retry period before the kill, that step at most one follower step after
  // it), and takes it at its first step after the lease ran out: so never before
  // lease - retry after the kill, and within lease + 2 follower steps.
  EXPECT_GE(took, kLeaseDurationS - kRetryPeriodS - 0.5);
  EXPECT_LE(took, kLeaseDurationS + 2 * kFollowerStepS + 1);
}

TEST_F(LeaderElectionE2E, SigtermReleasesTheLeaseAndTheOtherTakesOverAtItsNextStep) {
  const double took = Failover(SIGTERM, kLeaseDurationS);
  ASSERT_GE(took, 0) << "the follower never took the lease over";
  std::printf("[ figures  ] leader failover after SIGTERM: %.2f s (retry %g s)\n", took,
              kRetryPeriodS);
  EXPECT_LE(took, kFollowerStepS + 1.5);  // the release, then the follower's next step
  const std::string log = a_->log() + b_->log();
  EXPECT_NE(log.find("released lease ai/aiscale"), std::string::npos) << log;
}

TEST_F(LeaderElectionE2E, ALeaderThatCannotRenewStopsApplyingAtItsRenewDeadline) {
  a_->Start();
  ASSERT_TRUE(WaitFor([&] { return Holder() == "a" && PatchesBy()["a"] >= 1; }, 10)) << a_->log();
  // From now on every write of the Lease fails: a's last successful renewal was before this.
  const auto broken = Clock::now();
  server_->InjectFault("PUT", "/apis/coordination.k8s.io/v1/namespaces/ai/leases/aiscale",
                       {500, 1000000});
  ASSERT_TRUE(WaitFor([&] { return a_->log().find("stopped leading") != std::string::npos; }, 15))
      << a_->log();
  const double stopped = Since(broken);
  std::printf(
      "[ figures  ] leader stopped applying %.2f s after its lease writes began failing "
      "(renew deadline 10 s)\n",
      stopped);
  EXPECT_LE(stopped, 10 + 1.0);  // the deadline, then at most one tick's sync
  // Nothing applied past the deadline (measured from before its last renewal could have been),
  // so well before the 15 s a follower would wait.
  const auto deadline = broken + std::chrono::milliseconds(10500);
  int late = 0;
  for (const auto& r : server_->Requests()) {
    if (r.method == "PATCH" && r.at > deadline) ++late;
  }
  EXPECT_EQ(late, 0);
  // The API heals: a finds its own lease and leads again.
  server_->InjectFault("PUT", "/apis/coordination.k8s.io/v1/namespaces/ai/leases/aiscale",
                       {500, 0});
  const int before = PatchesBy()["a"];
  EXPECT_TRUE(WaitFor([&] { return PatchesBy()["a"] > before; }, 10)) << a_->log();
  a_->Kill(SIGTERM);
  EXPECT_EQ(a_->Reap(std::chrono::seconds(10)), 0) << a_->log();
}

TEST(LeaderElectionConfig, ReadFromTheControllerConfigWithErrorsAtTheirPlace) {
  struct Case {
    const char* name;
    std::string block;  // spec.leader_election
    std::string error;  // "": valid
  };
  const std::vector<Case> cases = {
      {"absent: off", "", ""},
      {"on with defaults", "  leader_election: {namespace: ai}\n", ""},
      {"renew deadline too long", "  leader_election:\n    renew_deadline: 20s\n",
       "c.yaml:6:21: spec.leader_election.renew_deadline: renew_deadline (20 s) must be less "
       "than lease_duration (15 s)"},
      {"retry too long", "  leader_election:\n    retry_period: 10s\n",
       "c.yaml:6:19: spec.leader_election.retry_period: retry_period (10 s) must be less than "
       "renew_deadline (10 s)"},
      {"bad auth", "  leader_election:\n    auth: {in_cluster: true, context: x}\n",
       "in_cluster: true excludes kubeconfig and context"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errs;
    const std::string text =
        "apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\nspec:\n  period: 5s\n" +
        c.block + "  workloads:\n    - {name: a, kind: Deployment, policy: {name: static}}\n";
    auto cfg = ParseControllerConfig(config::ParseConfig(text, "c.yaml", errs));
    if (c.error.empty()) {
      ASSERT_TRUE(cfg.ok()) << errs.ToStatus().message();
      EXPECT_EQ(cfg->leader_election.enabled, !c.block.empty());
      EXPECT_EQ(cfg->leader_election.lease_duration, std::chrono::seconds(15));
    } else {
      EXPECT_FALSE(cfg.ok());
      EXPECT_NE(errs.ToStatus().message().find(c.error), std::string::npos)
          << errs.ToStatus().message();
    }
  }
}

// Calls the actuator made between ClearRequests and now, per tick (a tick Observes once, so
// reads the Deployment itself once), lease calls apart. Counted over whole ticks only: from
// just after the first read of the Deployment to the last one, so a window that cuts a tick in
// two counts neither half.
struct CallCount {
  int ticks = 0, workload = 0, lease = 0, patches = 0;
  double PerTick() const { return ticks ? static_cast<double>(workload) / ticks : 0; }
};
CallCount CountCalls(const testing::FakeKubeApiServer& server) {
  CallCount c;
  int markers = 0;
  int since_marker = 0, patches_since_marker = 0;
  for (const auto& r : server.Requests()) {
    if (r.resource == "leases") {
      ++c.lease;
      continue;
    }
    ++since_marker;
    if (r.method == "PATCH") ++patches_since_marker;
    if (r.method == "GET" && r.resource == "deployments" && r.subresource.empty()) {
      if (markers++ > 0) {  // one whole tick ends here
        c.workload += since_marker;
        c.patches += patches_since_marker;
      }
      since_marker = patches_since_marker = 0;
    }
  }
  c.ticks = std::max(markers - 1, 0);
  return c;
}

TEST_F(LeaderElectionE2E, ApiCallsPerTickPerWorkloadAreConstant) {
  // Observe is GET /scale and GET the Deployment; an Apply that changes the size adds GET
  // /scale, PATCH /scale and POST an Event. Nothing lists pods or nodes (gpu_capacity is off).
  struct Phase {
    const char* name;
    bool drift;  // someone keeps resetting the size: every tick applies
    double min_per_tick, max_per_tick;
  };
  const std::vector<Phase> phases = {{"steady", false, 2, 2}, {"changing", true, 4, 5}};
  drifting_ = false;
  a_->Start();
  ASSERT_TRUE(WaitFor([&] { return Holder() == "a"; }, 10)) << a_->log();
  for (const Phase& p : phases) {
    SCOPED_TRACE(p.name);
    drifting_ = p.drift;
    std::this_thread::sleep_for(std::chrono::seconds(2));
    server_->ClearRequests();
    std::this_thread::sleep_for(std::chrono::seconds(4));
    const CallCount c = CountCalls(*server_);
    ASSERT_GT(c.ticks, 0);
    std::printf(
        "[ figures  ] API calls per tick per workload, %s: %.2f (%d calls, %d ticks, %d with a "
        "PATCH); lease calls: %.2f per second\n",
        p.name, c.PerTick(), c.workload, c.ticks, c.patches, c.lease / 4.0);
    EXPECT_GE(c.PerTick(), p.min_per_tick);
    EXPECT_LE(c.PerTick(), p.max_per_tick);
  }
  a_->Kill(SIGTERM);
  EXPECT_EQ(a_->Reap(std::chrono::seconds(10)), 0) << a_->log();
}

}  // namespace
}  // namespace aiscale::cli
