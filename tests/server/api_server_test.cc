// ApiServer over real HTTP on 127.0.0.1 (ephemeral ports), with a FakeLiveView and a
// MemoryStore: every endpoint, every error body, start/stop behaviour and concurrent reads.
#include "server/api_server.h"

#include <atomic>
#include <future>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "server/fake_live_view.h"
#include "store/memory_store.h"

namespace aiscale::server {
namespace {

using aiscale::testing::ApiDecision;
using aiscale::testing::ApiWorkload;
using aiscale::testing::FakeLiveView;

struct Answer {
  int status = -1;  // -1: no response (connection failed)
  std::string body;
  std::string content_type;
  std::string allow;
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

Answer Send(int port, const std::string& method, const std::string& path) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(5);
  cli.set_read_timeout(10);
  httplib::Result r = method == "GET"      ? cli.Get(path)
                      : method == "HEAD"   ? cli.Head(path)
                      : method == "POST"   ? cli.Post(path)
                      : method == "PUT"    ? cli.Put(path)
                      : method == "PATCH"  ? cli.Patch(path)
                      : method == "DELETE" ? cli.Delete(path)
                                           : cli.Options(path);
  Answer a;
  if (!r) return a;
  a.status = r->status;
  a.body = r->body;
  a.content_type = r->get_header_value("Content-Type");
  a.allow = r->get_header_value("Allow");
  return a;
}

Answer Get(int port, const std::string& path) { return Send(port, "GET", path); }

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WorkloadView finished = ApiWorkload("batch", "bert", 2);
    finished.state = "completed";  // its engine said so (ScaleState::completed)
    view_.Set({ApiWorkload("serving", "llm", 4), finished, ApiWorkload("other", "bert", 1)});
    view_.SetReady(true);
    for (int i = 0; i < 25; ++i) {
      ASSERT_TRUE(store_.Append(ApiDecision("serving/llm", 15.0 * i, i)).ok());
    }
    server_ =
        std::make_unique<ApiServer>(ServerOptions{"127.0.0.1", 0}, view_, &store_, telemetry_);
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
    ASSERT_GT(port_, 0);
  }

  FakeLiveView view_;
  store::MemoryStore store_;
  Telemetry telemetry_;
  std::unique_ptr<ApiServer> server_;
  int port_ = 0;
};

void ExpectError(const Answer& a, int code, const std::string& reason, const std::string& words) {
  EXPECT_EQ(a.status, code) << a.body;
  EXPECT_EQ(a.content_type, "application/json");
  const nlohmann::json j = a.Json();
  ASSERT_TRUE(j.is_object()) << a.body;
  EXPECT_EQ(j["error"]["code"], code);
  EXPECT_EQ(j["error"]["reason"], reason);
  EXPECT_NE(j["error"]["message"].get<std::string>().find(words), std::string::npos) << a.body;
}

TEST_F(ApiServerTest, HealthzAndReadyz) {
  view_.SetReady(false);
  const Answer health = Get(port_, "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok");
  ExpectError(Get(port_, "/readyz"), 503, "ServiceUnavailable", "no controller tick");
  view_.SetReady(true);
  const Answer ready = Get(port_, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ok");
}

TEST_F(ApiServerTest, MetricsIsTheTelemetryText) {
  telemetry_.DeclareGauge("aiscale_desired_replicas", "Replicas asked for.");
  telemetry_.Set("aiscale_desired_replicas", {{"workload", "serving/llm"}}, 4);
  ASSERT_EQ(Get(port_, "/healthz").status, 200);
  const Answer a = Get(port_, "/metrics");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(a.body.find("aiscale_desired_replicas{workload=\"serving/llm\"} 4\n"),
            std::string::npos)
      << a.body;
  EXPECT_NE(a.body.find("aiscale_api_requests_total{code=\"200\",route=\"healthz\"} 1\n"),
            std::string::npos)
      << a.body;
}

TEST_F(ApiServerTest, ListsWorkloadsSortedWithTheirLastDecision) {
  const Answer a = Get(port_, "/api/v1/workloads");
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.content_type, "application/json");
  const nlohmann::json j = a.Json();
  ASSERT_EQ(j["count"], 3);
  EXPECT_EQ(j["workloads"][0]["key"], "batch/bert");
  EXPECT_EQ(j["workloads"][0]["state"], "completed");
  EXPECT_EQ(j["workloads"][1]["key"], "other/bert");
  const nlohmann::json& llm = j["workloads"][2];
  EXPECT_EQ(llm["name"], "llm");
  EXPECT_EQ(llm["namespace"], "serving");
  EXPECT_EQ(llm["kind"], "InferenceService");
  EXPECT_EQ(llm["policy"], "hpa");
  EXPECT_EQ(llm["engine"], "kubernetes");
  EXPECT_EQ(llm["current"], 4);
  EXPECT_EQ(llm["ready"], 4);
  EXPECT_EQ(llm["desired"], 4);
  EXPECT_EQ(llm["state"], "running");
  EXPECT_EQ(llm["last_decision"]["rule"], "hpa_ratio");
  EXPECT_EQ(llm["last_decision"]["action"], "scaled");
  EXPECT_NE(llm["last_decision"]["summary"].get<std::string>().find("over target 24"),
            std::string::npos);
  EXPECT_EQ(llm["last_decision_time"], "2026-09-21T14:14:20.000Z");
}

TEST_F(ApiServerTest, OneWorkloadByKeyOrPlainName) {
  struct Case {
    const char* name;
    std::string path;
    std::string key;  // empty: an error is expected
    int code;
  };
  const std::vector<Case> cases = {
      {"encoded key", "/api/v1/workloads/serving%2Fllm", "serving/llm", 200},
      {"plain key", "/api/v1/workloads/serving/llm", "serving/llm", 200},
      {"unique plain name", "/api/v1/workloads/llm", "serving/llm", 200},
      {"ambiguous plain name", "/api/v1/workloads/bert", "", 400},
      {"unknown", "/api/v1/workloads/nope", "", 404},
      {"unknown namespace", "/api/v1/workloads/x%2Fllm", "", 404},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Answer a = Get(port_, c.path);
    if (c.key.empty()) {
      ExpectError(a, c.code, c.code == 404 ? "NotFound" : "BadRequest",
                  c.code == 404 ? "unknown workload" : "batch/bert, other/bert");
      continue;
    }
    ASSERT_EQ(a.status, c.code) << a.body;
    const nlohmann::json j = a.Json();
    EXPECT_EQ(j["key"], c.key);
    EXPECT_EQ(j["last_decision"]["rule"], "hpa_ratio");
    EXPECT_EQ(j["last_decision"]["inputs"][1]["status"], "stale");
    ASSERT_EQ(j["signals"].size(), 2u);
    EXPECT_EQ(j["signals"][0]["value"], 30);
    EXPECT_EQ(j["signals"][0]["age_s"], 4.5);
    EXPECT_EQ(j["signals"][0]["source"], "prometheus");
    EXPECT_TRUE(j["signals"][1]["value"].is_null());  // stale: not data
    EXPECT_TRUE(j["signals"][1]["age_s"].is_null());
    EXPECT_EQ(j["signals"][1]["detail"], "all 3 values older than 45 s");
  }
}

TEST_F(ApiServerTest, DecisionsNewestFirstWithLimit) {
  struct Case {
    const char* name;
    std::string query;
    int count;
  };
  const std::vector<Case> cases = {
      {"default 20", "", 20},
      {"limit 3", "?limit=3", 3},
      {"limit above what is stored", "?limit=1000", 25},
      {"leading zeros", "?limit=0005", 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Answer a = Get(port_, "/api/v1/workloads/serving%2Fllm/decisions" + c.query);
    ASSERT_EQ(a.status, 200) << a.body;
    const nlohmann::json j = a.Json();
    EXPECT_EQ(j["workload"], "serving/llm");
    ASSERT_EQ(j["decisions"].size(), static_cast<size_t>(c.count));
    EXPECT_EQ(j["count"], c.count);
    for (int i = 0; i < c.count; ++i) {
      const nlohmann::json& d = j["decisions"][i];
      EXPECT_EQ(d["t_s"], 15.0 * (24 - i));  // newest first
      EXPECT_EQ(d["recommended"], 4 + 24 - i);
    }
    const nlohmann::json& newest = j["decisions"][0];
    EXPECT_EQ(newest["rule"], "hpa_ratio");
    EXPECT_EQ(newest["reason"], "concurrency 54 per replica over target 24");
    EXPECT_EQ(newest["facts"]["ratio"], 1.25);
    EXPECT_EQ(newest["inputs"][0]["value"], 54);
    EXPECT_EQ(newest["action_detail"], "3 -> 28");
  }
  // A plain name resolves through the view too.
  EXPECT_EQ(Get(port_, "/api/v1/workloads/llm/decisions?limit=1").Json()["count"], 1);
}

TEST_F(ApiServerTest, PoolAfterTheLastTick) {
  // No pool in the config: 404 saying so.
  ExpectError(Get(port_, "/api/v1/pool"), 404, "NotFound", "runs no shared pool");
  PoolView p;
  p.known = true;
  p.gpus = 12;
  p.granted = 10;
  p.reclaimed = 4;
  p.detail = "12 GPUs on 3 usable node(s) of partition gpu (Slurm gres)";
  p.tenants = {{"search", 8, 4, 2.0, 9, 8, 0}, {"research", 4, std::nullopt, 1.0, 6, 2, 0}};
  view_.SetPool(p);
  Answer a = Get(port_, "/api/v1/pool");
  ASSERT_EQ(a.status, 200) << a.body;
  const nlohmann::json j = a.Json();
  EXPECT_EQ(j["gpus"], 12);
  EXPECT_EQ(j["idle"], 2);
  EXPECT_EQ(j["reclaimed"], 4);
  EXPECT_EQ(j["detail"], p.detail);
  ASSERT_EQ(j["tenants"].size(), 2u);
  EXPECT_EQ(j["tenants"][0]["borrow_limit"], 4);
  EXPECT_TRUE(j["tenants"][1]["borrow_limit"].is_null());
  EXPECT_EQ(j["tenants"][1]["wanted"], 6);
  // Unknown (the engine did not answer): no size, no idle, and the reason.
  p.known = false;
  p.detail = "pool source failed: Slurm did not answer";
  view_.SetPool(p);
  const nlohmann::json u = Get(port_, "/api/v1/pool").Json();
  EXPECT_FALSE(u["known"].get<bool>());
  EXPECT_TRUE(u["gpus"].is_null());
  EXPECT_TRUE(u["idle"].is_null());
  EXPECT_EQ(u["detail"], p.detail);
  ExpectError(Send(port_, "POST", "/api/v1/pool"), 405, "MethodNotAllowed", "read-only");
}

TEST_F(ApiServerTest, BadLimitIs400) {
  for (const std::string limit : {"0", "1001", "-1", "abc", "2.5", "", "99999999999999999999"}) {
    SCOPED_TRACE(limit);
    ExpectError(Get(port_, "/api/v1/workloads/serving%2Fllm/decisions?limit=" + limit), 400,
                "BadRequest", "invalid limit");
  }
}

TEST_F(ApiServerTest, DecisionsOfUnknownOrDepartedWorkloads) {
  ExpectError(Get(port_, "/api/v1/workloads/nope/decisions"), 404, "NotFound", "unknown workload");
  ExpectError(Get(port_, "/api/v1/workloads/bert/decisions"), 400, "BadRequest", "ambiguous");
  // A workload no longer in the config still has its history.
  ASSERT_TRUE(store_.Append(ApiDecision("gone/old", 1, 0)).ok());
  const Answer a = Get(port_, "/api/v1/workloads/gone%2Fold/decisions");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.Json()["count"], 1);
  // Known to the view but nothing stored yet: an empty list, not an error.
  const Answer none = Get(port_, "/api/v1/workloads/batch%2Fbert/decisions");
  EXPECT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(none.Json()["count"], 0);
}

class FailingStore final : public Store {
 public:
  Status Append(const Decision&) override { return Status::Ok(); }
  Result<std::vector<Decision>> Recent(const std::string&, size_t) override {
    return Status::Unavailable("database is locked");
  }
  Result<PersistentState> LoadState(const std::string&) override { return PersistentState{}; }
  Status SaveState(const std::string&, const PersistentState&) override { return Status::Ok(); }
};

TEST(ApiServerStore, NoStoreIs503AndStoreFailureIs500) {
  FakeLiveView view;
  view.Set({ApiWorkload("serving", "llm", 1)});
  Telemetry telemetry;
  FailingStore failing;
  struct Case {
    const char* name;
    Store* store;
    int code;
    std::string reason;
    std::string words;
  };
  const std::vector<Case> cases = {
      {"no store", nullptr, 503, "ServiceUnavailable", "no store configured"},
      {"store fails", &failing, 500, "InternalError", "database is locked"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ApiServer server({"127.0.0.1", 0}, view, c.store, telemetry);
    ASSERT_TRUE(server.Start().ok());
    ExpectError(Get(server.port(), "/api/v1/workloads/llm/decisions"), c.code, c.reason, c.words);
    EXPECT_EQ(Get(server.port(), "/api/v1/workloads/llm").status, 200);
  }
}

TEST_F(ApiServerTest, UnknownPathsAre404AndWritesAre405) {
  for (const std::string path : {"/", "/api", "/api/v1", "/api/v1/workloads/", "/api/v2/workloads",
                                 "/metricsx", "/api/v1/workloads/llm/"}) {
    SCOPED_TRACE(path);
    ExpectError(Get(port_, path), 404, "NotFound", "no such path");
  }
  for (const std::string method : {"POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    for (const std::string path : {"/api/v1/workloads", "/api/v1/workloads/llm", "/healthz",
                                   "/api/v1/workloads/llm/decisions"}) {
      SCOPED_TRACE(method + " " + path);
      const Answer a = Send(port_, method, path);
      ExpectError(a, 405, "MethodNotAllowed", "read-only");
      EXPECT_EQ(a.allow, "GET, HEAD");
    }
  }
  ExpectError(Send(port_, "POST", "/nope"), 404, "NotFound", "no such path");
  // Issue 27 §6: answered "unknown workload '/decisions'".
  for (const std::string path : {"/api/v1/workloads//decisions", "/api/v1/workloads//llm"}) {
    SCOPED_TRACE(path);
    ExpectError(Get(port_, path), 400, "BadRequest", "no workload name in " + path);
  }
  const Answer head = Send(port_, "HEAD", "/api/v1/workloads");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  // Every answer so far was counted by route and code. cpp-httplib counts (its logger) after
  // the answer is sent, so the last count may land just after the client has read it.
  const MetricLabels not_found = {{"route", "none"}, {"code", "404"}};
  const MetricLabels not_allowed = {{"route", "workloads"}, {"code", "405"}};
  cli::WaitFor(
      [&] {
        return telemetry_.Value("aiscale_api_requests_total", not_found) >= 8 &&
               telemetry_.Value("aiscale_api_requests_total", not_allowed) >= 5;
      },
      5);
  EXPECT_EQ(telemetry_.Value("aiscale_api_requests_total", not_found), 8);
  EXPECT_EQ(telemetry_.Value("aiscale_api_requests_total", not_allowed), 5);
}

TEST_F(ApiServerTest, PortInUseFailsClearly) {
  ApiServer second({"127.0.0.1", port_}, view_, &store_, telemetry_);
  const Status s = second.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsUnavailable());
  EXPECT_NE(s.message().find("127.0.0.1:" + std::to_string(port_)), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("in use"), std::string::npos) << s.message();
  // The first server is unaffected and still answers alone.
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
}

TEST_F(ApiServerTest, StartTwiceConflictsAndStopIsIdempotent) {
  EXPECT_TRUE(server_->Start().IsConflict());
  server_->Stop();
  server_->Stop();
  EXPECT_EQ(server_->port(), 0);
  EXPECT_EQ(Get(port_, "/healthz").status, -1);  // nothing listens any more
  ASSERT_TRUE(server_->Start().ok());            // and it can serve again
  EXPECT_EQ(Get(server_->port(), "/healthz").status, 200);
}

TEST_F(ApiServerTest, StopReturnsWithAKeepAliveClientConnected) {
  httplib::Client idle("127.0.0.1", port_);
  idle.set_keep_alive(true);
  ASSERT_TRUE(idle.Get("/healthz"));  // the connection stays open, its worker waiting
  // A hang guard, not a speed assertion: Stop must not wait on the idle client.
  auto stopped = std::async(std::launch::async, [this] { server_->Stop(); });
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(Get(port_, "/healthz").status, -1);
}

TEST_F(ApiServerTest, ConcurrentReadsWhileTheViewChanges) {
  // Each version of the view is internally consistent (scale == v everywhere); a reader that
  // saw two versions mixed in one answer would find a mismatch.
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int v = 1; !done; v = v % 50 + 1) {
      view_.Set({ApiWorkload("serving", "llm", v), ApiWorkload("batch", "bert", v)});
    }
  });
  std::atomic<int> checked{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&, r] {
      for (int i = 0; i < 50; ++i) {
        const Answer a = Get(port_, r % 2 ? "/api/v1/workloads" : "/api/v1/workloads/llm");
        const nlohmann::json j = a.Json();
        const nlohmann::json w = r % 2 ? j["workloads"][1] : j;
        if (a.status != 200 || w["current"] != w["desired"] || w["ready"] != w["current"]) {
          ADD_FAILURE() << "torn or failed answer: " << a.status << " " << a.body;
          return;
        }
        if (r % 2 == 0 && w["last_decision"]["current"] != w["current"]) {
          ADD_FAILURE() << "decision from another version: " << a.body;
          return;
        }
        ++checked;
      }
    });
  }
  for (auto& t : readers) t.join();
  done = true;
  writer.join();
  EXPECT_EQ(checked, 200);
}

}  // namespace
}  // namespace aiscale::server
