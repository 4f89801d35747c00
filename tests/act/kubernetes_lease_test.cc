// LeaseElector against the wire-level FakeKubeApiServer (a fake: Debian ships no kube-apiserver)
// over real HTTP, with a clock that moves only when the test says so: acquire by create, renew,
// follower waiting out a valid lease and taking an expired one, losing leadership when renewals
// fail past the renew deadline, a 409 race, release, MicroTime, and the config's validation.
// The fake's Lease API itself (Status bodies for 404/409 Conflict/409 AlreadyExists) is checked
// here too, since the elector's behaviour rests on it.
#include "act/kubernetes_lease.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/curl_http_client.h"
#include "fakes/fake_kube_apiserver.h"

namespace aiscale::act {
namespace {

using nlohmann::json;
using testing::FakeKubeApiServer;

// Monotonic time that moves on Advance and on SleepUntil (the client's backoff), never alone.
class ManualClock final : public Clock {
 public:
  TimePoint Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  WallTime WallNow() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return WallTime(Seconds(1796288411)) + now_.time_since_epoch();
  }
  void SleepUntil(TimePoint t) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (t > now_) now_ = t;
  }
  void Advance(Duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }

 private:
  mutable std::mutex mu_;
  TimePoint now_{};
};

const std::regex kMicroTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)");

class LeaseElectorTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.Start()); }

  std::unique_ptr<LeaseElector> Make(const std::string& identity) {
    LeaderElectionConfig cfg;
    cfg.enabled = true;
    cfg.namespace_ = "aiscale";
    cfg.name = "aiscale";
    KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    KubeClientOptions opts;
    opts.call_timeout = cfg.retry_period;
    opts.attempt_timeout = Seconds(1);
    opts.seed = 3;
    return std::make_unique<LeaseElector>(
        cfg, identity, std::make_unique<KubeClient>(ep, http_, clock_, opts), clock_, &telemetry_);
  }
  json Spec() const { return server_.Lease("aiscale", "aiscale")["spec"]; }
  std::vector<std::string> Calls() const {
    std::vector<std::string> out;
    for (const auto& r : server_.Requests()) out.push_back(r.method + " " + r.path);
    return out;
  }

  FakeKubeApiServer server_;
  CurlHttpClient http_;
  ManualClock clock_;
  Telemetry telemetry_;
  const std::string path_ = LeasePath("aiscale", "aiscale");
};

TEST(MicroTime, SixFractionalDigitsUtc) {
  struct Case {
    const char* name;
    WallTime t;
    std::string want;
  };
  const WallTime base{Seconds(1796288411)};
  const std::vector<Case> cases = {
      {"whole second", base, "2026-12-03T09:00:11.000000Z"},
      {"micros", base + std::chrono::microseconds(123456), "2026-12-03T09:00:11.123456Z"},
      {"nanos truncated", base + Duration(999999999), "2026-12-03T09:00:11.999999Z"},
      {"one micro", base + std::chrono::microseconds(1), "2026-12-03T09:00:11.000001Z"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(FormatMicroTime(c.t), c.want);
  }
}

TEST_F(LeaseElectorTest, AcquiresByCreatingTheLease) {
  auto a = Make("a");
  EXPECT_TRUE(a->Step());
  EXPECT_TRUE(a->IsLeader());
  EXPECT_EQ(a->Leader(), "a");
  EXPECT_EQ(Calls(), (std::vector<std::string>{"GET " + path_, "POST " + LeasePath("aiscale")}));
  const json spec = Spec();
  EXPECT_EQ(spec["holderIdentity"], "a");
  EXPECT_EQ(spec["leaseDurationSeconds"], 15);
  EXPECT_EQ(spec["leaseTransitions"], 0);
  EXPECT_EQ(spec["acquireTime"], "2026-12-03T09:00:11.000000Z");
  EXPECT_EQ(spec["renewTime"], spec["acquireTime"]);
  EXPECT_EQ(server_.Lease("aiscale", "aiscale")["kind"], "Lease");
  EXPECT_EQ(telemetry_.Value("aiscale_leader", {}), 1);
}

TEST_F(LeaseElectorTest, RenewsWithOnePutKeepingAcquireTime) {
  auto a = Make("a");
  ASSERT_TRUE(a->Step());
  const json first = Spec();
  const std::string rv = server_.Lease("aiscale", "aiscale")["metadata"]["resourceVersion"];
  for (int i = 1; i <= 3; ++i) {
    SCOPED_TRACE(i);
    clock_.Advance(Seconds(2));
    server_.ClearRequests();
    ASSERT_TRUE(a->Step());
    EXPECT_EQ(Calls(), (std::vector<std::string>{"PUT " + path_}));
  }
  const json spec = Spec();
  EXPECT_EQ(spec["acquireTime"], first["acquireTime"]);
  EXPECT_EQ(spec["renewTime"], "2026-12-03T09:00:17.000000Z");
  EXPECT_TRUE(std::regex_match(spec["renewTime"].get<std::string>(), kMicroTime));
  EXPECT_EQ(spec["leaseTransitions"], 0);
  EXPECT_NE(server_.Lease("aiscale", "aiscale")["metadata"]["resourceVersion"], rv);
}

TEST_F(LeaseElectorTest, FollowerWaitsOutAValidLeaseThenTakesIt) {
  struct Case {
    const char* name;
    double wait_s;  // after b first saw a's lease, with a silent
    bool b_leads;
  };
  const std::vector<Case> cases = {
      {"just after seeing it", 0, false},
      {"within the lease", 14.9, false},
      {"at the lease's end", 15, true},
      {"long after", 60, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeKubeApiServer fresh;  // each case on its own server: no lease left from the last
    ASSERT_TRUE(fresh.Start());
    KubeEndpoint ep{fresh.Url(), {}, "fake-token", "", "test"};
    auto make = [&](const std::string& id) {
      LeaderElectionConfig cfg;
      cfg.namespace_ = cfg.name = "aiscale";
      return std::make_unique<LeaseElector>(
          cfg, id, std::make_unique<KubeClient>(ep, http_, clock_, KubeClientOptions{}), clock_);
    };
    auto a = make("a");
    auto b = make("b");
    ASSERT_TRUE(a->Step());
    EXPECT_FALSE(b->Step());
    EXPECT_EQ(b->Leader(), "a");
    EXPECT_NE(b->last_error().find("held by a"), std::string::npos) << b->last_error();
    clock_.Advance(Seconds(c.wait_s));
    EXPECT_EQ(b->Step(), c.b_leads);
    const json spec = fresh.Lease("aiscale", "aiscale")["spec"];
    EXPECT_EQ(spec["holderIdentity"], c.b_leads ? "b" : "a");
    EXPECT_EQ(spec["leaseTransitions"], c.b_leads ? 1 : 0);
    // The old leader, back after its renew deadline, finds b holding it and follows.
    if (c.b_leads) {
      EXPECT_FALSE(a->Step());
      EXPECT_FALSE(a->IsLeader());
      EXPECT_EQ(a->Leader(), "b");
    }
  }
}

TEST_F(LeaseElectorTest, LeaderStopsBeforeTheRenewDeadlineWhenRenewalsFail) {
  struct Case {
    const char* name;
    int status;  // what every Lease call answers while the API is broken
  };
  const std::vector<Case> cases = {
      {"server errors (retried within the step)", 500},
      {"forbidden (not retried)", 403},
      {"unavailable", 503},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeKubeApiServer fresh;
    ASSERT_TRUE(fresh.Start());
    KubeEndpoint ep{fresh.Url(), {}, "fake-token", "", "test"};
    LeaderElectionConfig cfg;
    cfg.namespace_ = cfg.name = "aiscale";
    KubeClientOptions opts;
    opts.call_timeout = cfg.retry_period;
    LeaseElector a(cfg, "a", std::make_unique<KubeClient>(ep, http_, clock_, opts), clock_);
    ASSERT_TRUE(a.Step());
    const TimePoint renewed = clock_.Now();
    for (const char* m : {"GET", "PUT"}) fresh.InjectFault(m, path_, {c.status, 1000});
    while (clock_.Now() < renewed + Seconds(12)) {
      clock_.SleepUntil(a.NextStep());
      a.Step();
      EXPECT_EQ(a.IsLeader(), clock_.Now() < renewed + cfg.renew_deadline)
          << ToSeconds(clock_.Now() - renewed) << " s after the last renewal";
    }
    EXPECT_FALSE(a.IsLeader());
    EXPECT_FALSE(a.last_error().empty());
    // Before anyone else may take it: the earliest a follower can is lease_duration after it
    // saw the last renewal, which happened no earlier than `renewed`.
    EXPECT_LT(cfg.renew_deadline, cfg.lease_duration);
  }
}

TEST_F(LeaseElectorTest, IsLeaderTurnsFalseAtTheDeadlineEvenWithoutAStep) {
  auto a = Make("a");
  ASSERT_TRUE(a->Step());
  clock_.Advance(Seconds(9.999));
  EXPECT_TRUE(a->IsLeader());
  clock_.Advance(Seconds(0.001));
  EXPECT_FALSE(a->IsLeader());
}

TEST_F(LeaseElectorTest, ConflictMeansTheRaceWasLost) {
  struct Case {
    const char* name;
    bool leader_first;  // a leads and its cached copy goes stale; else a races b to create
  };
  const std::vector<Case> cases = {{"stale resourceVersion on renew", true},
                                   {"create of an existing lease", false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeKubeApiServer fresh;
    ASSERT_TRUE(fresh.Start());
    KubeEndpoint ep{fresh.Url(), {}, "fake-token", "", "test"};
    LeaderElectionConfig cfg;
    cfg.namespace_ = cfg.name = "aiscale";
    auto make = [&](const std::string& id) {
      return std::make_unique<LeaseElector>(
          cfg, id, std::make_unique<KubeClient>(ep, http_, clock_, KubeClientOptions{}), clock_);
    };
    auto a = make("a");
    auto b = make("b");
    if (c.leader_first) {
      ASSERT_TRUE(a->Step());
      // Someone else (b, after a long pause of a) wrote the Lease since a's last renewal.
      json lease = fresh.Lease("aiscale", "aiscale");
      lease["spec"]["holderIdentity"] = "b";
      lease["metadata"]["resourceVersion"] = "99999";
      fresh.SetObject("coordination.k8s.io", "leases", "aiscale", "aiscale", lease);
      fresh.ClearRequests();
      clock_.Advance(Seconds(2));
      EXPECT_FALSE(a->Step());
      EXPECT_EQ(a->Leader(), "b");
      std::vector<std::string> calls;
      for (const auto& r : fresh.Requests()) calls.push_back(r.method);
      EXPECT_EQ(calls, (std::vector<std::string>{"PUT", "GET"}));  // 409, then a re-read
    } else {
      ASSERT_TRUE(b->Step());
      fresh.InjectFault("GET", path_, {404, 1});  // a read before b created it
      EXPECT_FALSE(a->Step());
      EXPECT_NE(a->last_error().find("already exists"), std::string::npos) << a->last_error();
    }
    EXPECT_FALSE(a->IsLeader());
    EXPECT_EQ(fresh.Lease("aiscale", "aiscale")["spec"]["holderIdentity"], "b");
  }
}

// A leader renews every retry period; a follower waits a retry period plus up to 1.2 of one
// more (client-go's acquire jitter), drawn per identity, so followers spread out.
TEST_F(LeaseElectorTest, FollowersJitterTheirRetriesLeadersDoNot) {
  auto a = Make("a");
  auto b = Make("b");
  auto c = Make("c");
  const Duration retry = Seconds(2);
  std::vector<Duration> waits_b, waits_c;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(a->Step());
    EXPECT_EQ(a->NextStep() - clock_.Now(), retry);
    ASSERT_FALSE(b->Step());
    ASSERT_FALSE(c->Step());
    waits_b.push_back(b->NextStep() - clock_.Now());
    waits_c.push_back(c->NextStep() - clock_.Now());
    clock_.Advance(retry);
  }
  Duration longest{};
  for (const Duration w : waits_b) {
    EXPECT_GE(w, retry);
    EXPECT_LE(w, Seconds(2 * 2.2));
    longest = std::max(longest, w);
  }
  EXPECT_GT(longest, Seconds(3));  // 20 draws all under half the range: 1 in 2^20
  EXPECT_NE(waits_b, waits_c);     // another identity, other draws
  auto b2 = Make("b");
  b2->Step();
  EXPECT_EQ(b2->NextStep() - clock_.Now(), waits_b[0]);  // the same identity, the same draws
}

TEST_F(LeaseElectorTest, ReleaseHandsOverAtTheFollowersNextStep) {
  auto a = Make("a");
  auto b = Make("b");
  ASSERT_TRUE(a->Step());
  EXPECT_FALSE(b->Step());
  clock_.Advance(Seconds(2));
  ASSERT_TRUE(a->Step());
  ASSERT_TRUE(a->Release().ok());
  EXPECT_FALSE(a->IsLeader());
  EXPECT_EQ(telemetry_.Value("aiscale_leader", {}), 0);
  json spec = Spec();
  EXPECT_EQ(spec["holderIdentity"], "");
  EXPECT_EQ(spec["leaseDurationSeconds"], 1);
  EXPECT_EQ(spec["leaseTransitions"], 0);
  EXPECT_TRUE(std::regex_match(spec["renewTime"].get<std::string>(), kMicroTime));
  EXPECT_TRUE(b->Step());  // no wait for the lease to run out
  spec = Spec();
  EXPECT_EQ(spec["holderIdentity"], "b");
  EXPECT_EQ(spec["leaseTransitions"], 1);
  // Releasing what one does not hold writes nothing.
  server_.ClearRequests();
  EXPECT_TRUE(a->Release().ok());
  EXPECT_TRUE(server_.Requests().empty());
}

TEST(FakeLeaseApi, AnswersWithTheApiServersStatusBodies) {
  FakeKubeApiServer server;
  ASSERT_TRUE(server.Start());
  CurlHttpClient http;
  auto call = [&](const std::string& method, const std::string& path, const json& body) {
    HttpRequest req;
    req.method = method;
    req.url = server.Url() + path;
    req.headers = {{"Authorization", "Bearer fake-token"}, {"Content-Type", "application/json"}};
    if (!body.is_null()) req.body = body.dump();
    req.timeout = Seconds(5);
    return http.Send(req);
  };
  const json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                      {"kind", "Lease"},
                      {"metadata", {{"name", "x"}, {"namespace", "ns"}}},
                      {"spec", {{"holderIdentity", "a"}}}};
  struct Case {
    const char* name;
    std::string method, path;
    json body;
    int status;
    std::string reason, message;
  };
  const std::string x = LeasePath("ns", "x");
  json stale = lease;
  stale["metadata"]["resourceVersion"] = "1";
  const std::vector<Case> cases = {
      {"get missing", "GET", x, json(), 404, "NotFound",
       "leases.coordination.k8s.io \"x\" not found"},
      {"update missing", "PUT", x, lease, 404, "NotFound",
       "leases.coordination.k8s.io \"x\" not found"},
      {"create", "POST", LeasePath("ns"), lease, 201, "", ""},
      {"create again", "POST", LeasePath("ns"), lease, 409, "AlreadyExists",
       "leases.coordination.k8s.io \"x\" already exists"},
      {"stale update", "PUT", x, stale, 409, "Conflict",
       "Operation cannot be fulfilled on leases.coordination.k8s.io \"x\": the object has been "
       "modified; please apply your changes to the latest version and try again"},
      {"get", "GET", x, json(), 200, "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<HttpResponse> r = call(c.method, c.path, c.body);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->status, c.status) << r->body;
    const json body = json::parse(r->body);
    if (c.reason.empty()) {
      EXPECT_EQ(body["kind"], "Lease");
      EXPECT_EQ(body["spec"]["holderIdentity"], "a");
      continue;
    }
    EXPECT_EQ(body["kind"], "Status");
    EXPECT_EQ(body["status"], "Failure");
    EXPECT_EQ(body["reason"], c.reason);
    EXPECT_EQ(body["message"], c.message);
    EXPECT_EQ(body["code"], c.status);
    EXPECT_EQ(body["details"],
              (json{{"name", "x"}, {"group", "coordination.k8s.io"}, {"kind", "leases"}}));
  }
  // A current resourceVersion is accepted and bumped.
  json current = server.Lease("ns", "x");
  current["spec"]["holderIdentity"] = "b";
  Result<HttpResponse> r = call("PUT", x, current);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_NE(json::parse(r->body)["metadata"]["resourceVersion"],
            current["metadata"]["resourceVersion"]);
}

TEST(LeaderElectionConfig, ParsesDefaultsAndRejectsUnsafeTimings) {
  struct Case {
    const char* name;
    std::string yaml;
    std::string error;  // substring of the first error ("file:line:col: path: message"); "": ok
    int line = 0;       // the first error's line
  };
  const std::vector<Case> cases = {
      {"defaults", "enabled: true\n", ""},
      {"explicit", "{namespace: ops, name: ai, lease_duration: 30s, renew_deadline: 20s}\n", ""},
      {"renew not below lease", "lease_duration: 10s\nrenew_deadline: 10s\n",
       "leader_election.renew_deadline: renew_deadline (10 s) must be less than lease_duration "
       "(10 s)",
       3},
      {"retry not below renew", "retry_period: 10s\n",
       "leader_election.retry_period: retry_period (10 s) must be less than renew_deadline (10 s)",
       2},
      {"unknown field", "lease: 15s\n", "lease", 2},
      {"bad namespace", "namespace: Ops_1\n", "leader_election.namespace: must be a DNS label", 2},
      {"empty identity", "identity: ''\n", "must not be empty", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errs;
    const config::ConfigNode root = config::ParseConfig(
        "leader_election:\n  " + std::regex_replace(c.yaml, std::regex("\n(.)"), "\n  $1"),
        "le.yaml", errs);
    const LeaderElectionConfig cfg = LeaderElectionConfig::Parse(root.Child("leader_election"));
    if (c.error.empty()) {
      EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
      EXPECT_TRUE(cfg.enabled);
      EXPECT_LT(cfg.renew_deadline, cfg.lease_duration);
    } else {
      ASSERT_FALSE(errs.empty());
      EXPECT_NE(errs.all()[0].ToString().find(c.error), std::string::npos)
          << errs.all()[0].ToString();
      EXPECT_EQ(errs.all()[0].file, "le.yaml");
      EXPECT_EQ(errs.all()[0].line, c.line) << errs.all()[0].ToString();
    }
  }
  config::ConfigErrors errs;
  const auto root = config::ParseConfig("leader_election: {enabled: true}\n", "le.yaml", errs);
  const LeaderElectionConfig d = LeaderElectionConfig::Parse(root.Child("leader_election"));
  EXPECT_EQ(d.lease_duration, Seconds(15));
  EXPECT_EQ(d.renew_deadline, Seconds(10));
  EXPECT_EQ(d.retry_period, Seconds(2));
  EXPECT_EQ(d.namespace_, "default");
  EXPECT_EQ(d.name, "aiscale");
}

TEST(LeaderIdentity, HostnamePidAndRandomSuffix) {
  const std::string a = DefaultLeaderIdentity();
  const std::string b = DefaultLeaderIdentity();
  EXPECT_NE(a, b);
  EXPECT_NE(a.find("_" + std::to_string(::getpid()) + "_"), std::string::npos) << a;
  EXPECT_TRUE(std::regex_search(a, std::regex("_[0-9a-f]{8}$"))) << a;
}

}  // namespace
}  // namespace aiscale::act
