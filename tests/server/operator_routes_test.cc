// The dashboard and the steering endpoints over real HTTP on 127.0.0.1 (ephemeral ports), with a
// FakeLiveView, a MemoryStore and a fake SteeringControl: pages, escaping, bad input (path
// traversal, malformed and huge query parameters, junk tokens, bad bodies), the token rules, and
// the status each steering outcome maps to.
#include <optional>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "core/system_clock.h"
#include "server/api_server.h"
#include "server/fake_live_view.h"
#include "server/steering_handlers.h"
#include "store/memory_store.h"

namespace aiscale::server {
namespace {

using aiscale::testing::ApiDecision;
using aiscale::testing::ApiWorkload;
using aiscale::testing::FakeLiveView;

constexpr const char* kToken = "s3cret-token-0123456789";

// Records what it was asked; answers `answer`.
class FakeSteering final : public SteeringControl {
 public:
  Result<SteerOutcome> Apply(const SteerRequest& r) override {
    ++calls;
    last = r;
    return answer;
  }
  int calls = 0;
  SteerRequest last;
  Result<SteerOutcome> answer = SteerOutcome{"serving/llm", Steering{}, "done"};
};

struct Answer {
  int status = -1;
  std::string body;
  std::string content_type;
  std::string www_authenticate;
};

class OperatorRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WorkloadView evil = ApiWorkload("ns", "<script>alert(1)</script>", 2);
    evil.signals[1].detail = "<b>broken</b> exporter \"quoted\" & 'single'";
    evil.last->recommendation.reason = "<img src=x onerror=alert(2)>";
    WorkloadView llm = ApiWorkload("serving", "llm", 4);
    llm.last->recommendation.facts.push_back({"concurrency.target", 24});
    view_.Set({llm, evil});
    view_.SetReady(true);
    const double now_s = ToSeconds(clock_.WallNow().time_since_epoch());
    for (int i = 0; i < 40; ++i) {
      Decision d = ApiDecision("serving/llm", 15.0 * i, i % 3);
      d.wall = WallTime(Seconds(now_s - 600 + 15.0 * i));
      ASSERT_TRUE(store_.Append(d).ok());
    }
    Decision e = ApiDecision("ns/<script>alert(1)</script>", 1, 0);
    e.wall = WallTime(Seconds(now_s - 30));
    e.recommendation.reason = "<img src=x onerror=alert(2)>";
    ASSERT_TRUE(store_.Append(e).ok());
    server_ =
        std::make_unique<ApiServer>(ServerOptions{"127.0.0.1", 0}, view_, &store_, telemetry_);
    server_->EnableOperatorRoutes({&clock_, &steering_, &gate_});
    ASSERT_TRUE(server_->Start().ok());
  }

  Answer Send(const std::string& method, const std::string& path, const std::string& body = "",
              std::optional<std::string> auth = std::nullopt) {
    httplib::Client cli("127.0.0.1", server_->port());
    cli.set_connection_timeout(5);
    cli.set_read_timeout(10);
    httplib::Headers h;
    if (auth) h.emplace("Authorization", *auth);
    httplib::Result r = method == "GET"    ? cli.Get(path, h)
                        : method == "POST" ? cli.Post(path, h, body, "application/json")
                                           : cli.Delete(path, h, body, "application/json");
    Answer a;
    if (!r) return a;
    a.status = r->status;
    a.body = r->body;
    a.content_type = r->get_header_value("Content-Type");
    a.www_authenticate = r->get_header_value("WWW-Authenticate");
    return a;
  }

  SystemClock clock_;
  FakeLiveView view_;
  store::MemoryStore store_;
  Telemetry telemetry_;
  FakeSteering steering_;
  TokenGate gate_;
  std::unique_ptr<ApiServer> server_;
};

// Nothing on a page may load from elsewhere: no absolute URL in src, href or CSS.
void ExpectSelfContained(const std::string& html) {
  for (const char* bad :
       {"src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(", "@import"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
}

TEST_F(OperatorRoutesTest, OverviewListsEveryWorkloadServerSide) {
  const Answer a = Send("GET", "/");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.content_type, "text/html; charset=utf-8");
  EXPECT_NE(a.body.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(a.body.find("data-workload=\"serving/llm\""), std::string::npos);
  EXPECT_NE(a.body.find("<td class=\"num\" data-field=\"desired\">4</td>"), std::string::npos);
  // current/target: the target from the hpa's "<signal>.target" fact; the stale one says so.
  EXPECT_NE(a.body.find(">concurrency 30/24</span>"), std::string::npos);
  EXPECT_NE(a.body.find(">kv_cache_usage &lt;stale&gt;</span>"), std::string::npos);
  EXPECT_NE(a.body.find("src=\"/static/dashboard.js\""), std::string::npos);
  ExpectSelfContained(a.body);
  const Answer part = Send("GET", "/?part=main");
  ASSERT_EQ(part.status, 200);
  EXPECT_EQ(part.body.find("<html"), std::string::npos);
  EXPECT_NE(part.body.find("id=\"workloads\""), std::string::npos);
}

TEST_F(OperatorRoutesTest, WorkloadPageHasChartsAndTheLogNewestFirst) {
  const Answer a = Send("GET", "/workloads/serving%2Fllm?hours=1");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("class=\"series desired\" data-points=\"40\""), std::string::npos);
  EXPECT_NE(a.body.find("class=\"series value\" data-points=\"40\""), std::string::npos);
  const size_t log = a.body.find("id=\"log\"");
  ASSERT_NE(log, std::string::npos);
  // Newest first: the last decision's reason (seq 39 % 3 = 0 -> "concurrency 30 ...") comes
  // before the one before it (seq 38 % 3 = 2 -> "concurrency 32").
  EXPECT_LT(a.body.find("concurrency 30 per", log), a.body.find("concurrency 32 per", log));
  ExpectSelfContained(a.body);
  EXPECT_EQ(Send("GET", "/workloads/nope").status, 404);
}

TEST_F(OperatorRoutesTest, HtmlInANameOrReasonIsEscapedEverywhere) {
  for (const std::string path :
       {"/", "/?part=main", "/workloads/ns%2F%3Cscript%3Ealert(1)%3C%2Fscript%3E"}) {
    SCOPED_TRACE(path);
    const Answer a = Send("GET", path);
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(a.body.find("<script>alert"), std::string::npos);
    EXPECT_EQ(a.body.find("<img src=x"), std::string::npos);
    EXPECT_EQ(a.body.find("<b>broken"), std::string::npos);
    EXPECT_NE(a.body.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  }
}

TEST_F(OperatorRoutesTest, BadQueryParametersAndPathsAreClear4xx) {
  struct Case {
    std::string path;
    int status;
  };
  const std::vector<Case> cases = {
      {"/?hours=abc", 400},
      {"/?hours=1e308", 400},
      {"/?hours=-1", 400},
      {"/workloads/serving%2Fllm?log=0", 400},
      {"/workloads/serving%2Fllm?log=99999999999999999999", 400},
      {"/?part=everything", 400},
      {"/?unknown=1", 400},
      {"/?hours=" + std::string(6000, '9'), 400},
      {"/static/../../../../etc/passwd", 404},
      {"/static/%2e%2e/%2e%2e/etc/passwd", 404},
      {"/static/dashboard.js/../../etc/passwd", 404},
      {"/workloads/..%2F..%2Fetc%2Fpasswd", 404},
      {"/static/", 404},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path.substr(0, 80));
    const Answer a = Send("GET", c.path);
    EXPECT_EQ(a.status, c.status) << a.body.substr(0, 200);
    EXPECT_EQ(a.body.find("root:"), std::string::npos);
  }
  // A request line far over httplib's limit is refused whole, and the server carries on.
  const Answer huge = Send("GET", "/?hours=" + std::string(70000, '1'));
  EXPECT_GE(huge.status, 400);
  EXPECT_EQ(Send("GET", "/").status, 200);
  EXPECT_EQ(Send("GET", "/static/dashboard.js").status, 200);
}

TEST_F(OperatorRoutesTest, SteeringIsOffWithoutAToken) {
  const Answer a = Send("POST", "/api/v1/workloads/llm/pause", "", "Bearer anything-at-all-123");
  EXPECT_EQ(a.status, 403);
  EXPECT_NE(a.body.find("steering is off"), std::string::npos);
  EXPECT_EQ(steering_.calls, 0);
}

TEST_F(OperatorRoutesTest, TokenRules) {
  gate_.Set(kToken);
  const std::string good = std::string("Bearer ") + kToken;
  struct Case {
    const char* name;
    std::optional<std::string> auth;
    int status;
  };
  const std::vector<Case> cases = {
      {"no header", std::nullopt, 401},
      {"empty", "", 401},
      {"basic scheme", "Basic dXNlcjpwYXNz", 401},
      {"bearer without token", "Bearer ", 401},
      {"lower-case scheme", std::string("bearer ") + kToken, 401},
      {"wrong token", "Bearer s3cret-token-0123456780", 403},
      {"prefix of the token", "Bearer s3cret-token", 403},
      {"token plus more", good + "x", 403},
      {"over our 4 KiB limit", "Bearer " + std::string(5000, 'a'), 401},
      {"over httplib's header limit", "Bearer " + std::string(9000, 'a'), 400},
      {"binary junk", std::string("Bearer \x01\x02\xff\xfe", 11), 403},
      {"right token", good, 200},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const int before = steering_.calls;
    const Answer a = Send("POST", "/api/v1/workloads/llm/pause", "", c.auth);
    EXPECT_EQ(a.status, c.status) << a.body;
    EXPECT_EQ(steering_.calls - before, c.status == 200 ? 1 : 0);
    if (c.status == 401) {
      EXPECT_EQ(a.www_authenticate, "Bearer realm=\"aiscale\"");
    }
    EXPECT_EQ(a.body.find(kToken), std::string::npos);
  }
}

TEST_F(OperatorRoutesTest, RequestsReachTheControlAndOutcomesMapToStatuses) {
  gate_.Set(kToken);
  const std::string auth = std::string("Bearer ") + kToken;
  ASSERT_EQ(
      Send("POST", "/api/v1/workloads/serving%2Fllm/pin", R"({"replicas": 3, "until": "2h"})", auth)
          .status,
      200);
  EXPECT_EQ(steering_.last.op, SteerOp::kPin);
  EXPECT_EQ(steering_.last.workload, "serving/llm");
  EXPECT_EQ(steering_.last.replicas, 3);
  EXPECT_NEAR(ToSeconds(steering_.last.until - clock_.WallNow()), 7200, 5);
  ASSERT_EQ(Send("POST", "/api/v1/workloads/llm/pause", R"({"direction": "down"})", auth).status,
            200);
  EXPECT_EQ(steering_.last.direction, PauseDirection::kDown);
  ASSERT_EQ(Send("DELETE", "/api/v1/workloads/llm/pin", "", auth).status, 200);
  EXPECT_EQ(steering_.last.op, SteerOp::kUnpin);

  struct Case {
    const char* name;
    std::string body;
    Status outcome;
    int status;
  };
  const std::vector<Case> cases = {
      {"unknown workload", R"({"replicas": 3})", Status::NotFound("unknown workload 'llm'"), 404},
      {"pin beyond max", R"({"replicas": 99})",
       Status::Invalid("cannot pin to 99 replicas: above max_replicas 4"), 422},
      {"conflict", R"({"replicas": 3})", Status::Conflict("not pinned"), 409},
      {"not ready", R"({"replicas": 3})", Status::Unavailable("not ready"), 503},
      {"malformed body", "{replicas: 3", Status::Ok(), 400},
      {"unknown field", R"({"replicas": 3, "rm": "-rf"})", Status::Ok(), 400},
      {"replicas not an integer", R"({"replicas": "3; drop table"})", Status::Ok(), 400},
      {"until in the past", R"({"replicas": 3, "until": "2001-01-01T00:00:00Z"})", Status::Ok(),
       400},
      {"no replicas", R"({"until": "1h"})", Status::Ok(), 400},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    steering_.answer =
        c.outcome.ok() ? Result<SteerOutcome>(SteerOutcome{}) : Result<SteerOutcome>(c.outcome);
    const int before = steering_.calls;
    const Answer a = Send("POST", "/api/v1/workloads/llm/pin", c.body, auth);
    EXPECT_EQ(a.status, c.status) << a.body;
    EXPECT_EQ(steering_.calls - before, c.status == 400 ? 0 : 1);
    if (!c.outcome.ok()) {
      EXPECT_NE(a.body.find(c.outcome.message()), std::string::npos) << a.body;
    }
  }
}

TEST_F(OperatorRoutesTest, PredictiveAndTrainingPagesDrawTheirOwnCharts) {
  const double now_s = ToSeconds(clock_.WallNow().time_since_epoch());
  WorkloadView fc = ApiWorkload("serving", "forecasted", 3);
  WorkloadView tr = ApiWorkload("train", "bert", 4);
  view_.Set({fc, tr});
  for (int i = 0; i < 20; ++i) {
    Decision d = ApiDecision("serving/forecasted", i, 0);
    d.wall = WallTime(Seconds(now_s - 300 + 15.0 * i));
    d.recommendation.facts = {
        {"forecast", 40.0 + i}, {"margin", 5}, {"demand", 38.0 + i}, {"lead_s", 120}};
    ASSERT_TRUE(store_.Append(d).ok());
    Decision t = ApiDecision("train/bert", i, 0);
    t.wall = d.wall;
    t.recommendation.facts = {
        {"samples_per_s", 900.0 + i},         {"phase", i < 5 ? 0.0 : 1.0},
        {"compute_samples_per_s_at_2", 500},  {"compute_samples_per_s_at_4", 950},
        {"compute_samples_per_s_at_8", 1700}, {"compute_observed_at_4", 920}};
    ASSERT_TRUE(store_.Append(t).ok());
  }
  const Answer f = Send("GET", "/workloads/serving%2Fforecasted?hours=1");
  ASSERT_EQ(f.status, 200);
  EXPECT_NE(f.body.find("class=\"band forecast\""), std::string::npos);
  EXPECT_NE(f.body.find("class=\"series forecast\" data-points=\"20\""), std::string::npos);
  EXPECT_EQ(f.body.find("Learned throughput"), std::string::npos);
  const Answer t = Send("GET", "/workloads/train%2Fbert?hours=1");
  ASSERT_EQ(t.status, 200);
  EXPECT_NE(t.body.find("<rect class=\"span load\""), std::string::npos);
  EXPECT_NE(t.body.find("class=\"series curve\" data-points=\"3\""), std::string::npos);
  EXPECT_NE(t.body.find("<circle class=\"observed\""), std::string::npos);
  EXPECT_EQ(t.body.find("class=\"band forecast\""), std::string::npos);
}

TEST(ConstantTimeEquals, Table) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", ""));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

}  // namespace
}  // namespace aiscale::server
