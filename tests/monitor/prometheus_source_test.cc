// PrometheusSource against a real local HTTP server (httplib on 127.0.0.1, ephemeral port)
// through the real CurlHttpClient: single and batched queries, request counting, errors,
// timeouts, body caps and bearer tokens.
#include "monitor/prometheus_source.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/curl_http_client.h"

namespace aiscale::monitor {
namespace {

namespace fs = std::filesystem;

std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(AISCALE_SOURCE_DIR) + "/tests/monitor/testdata/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Seen {
  std::string method;
  std::string query;
  std::string timeout;
  std::string authorization;
  std::string content_type;
};

// A stand-in Prometheus: answers /api/v1/query (GET and POST form) with `respond`, records
// every request, and can hold a request until the test ends (a hung server).
class FakePrometheus {
 public:
  using Responder = std::function<void(const Seen&, httplib::Response&)>;

  FakePrometheus() {
    server_.Get("/api/v1/query", [this](const httplib::Request& req, httplib::Response& res) {
      Handle(req, req.get_param_value("query"), req.get_param_value("timeout"), res);
    });
    // With a content reader, httplib leaves the body to us: its own form parsing stops at
    // 8 KB, while Prometheus (Go's ParseForm) reads up to 10 MB.
    server_.Post("/api/v1/query", [this](const httplib::Request& req, httplib::Response& res,
                                         const httplib::ContentReader& read) {
      std::string body;
      read([&](const char* data, size_t n) {
        body.append(data, n);
        return true;
      });
      std::multimap<std::string, std::string> form;
      httplib::detail::parse_query_text(body, form);
      auto get = [&](const char* key) {
        auto it = form.find(key);
        return it == form.end() ? std::string() : it->second;
      };
      Handle(req, get("query"), get("timeout"), res);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() is a no-op until the accept loop runs; without this wait a quick test could
    // stop the server before it started and then join a thread that never ends.
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~FakePrometheus() {
    Release();
    server_.stop();
    thread_.join();
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Respond(Responder r) {
    std::lock_guard<std::mutex> lock(mu_);
    respond_ = std::move(r);
  }
  void RespondWith(int status, std::string body) {
    Respond([status, body](const Seen&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/json");
    });
  }
  // Blocks the handler until the test ends (or 10 s pass).
  void Hang() {
    Respond([this](const Seen&, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(hang_mu_);
      hang_cv_.wait_for(lock, std::chrono::seconds(10), [this] { return released_; });
      res.set_content(Testdata("promql_empty.json"), "application/json");
    });
  }
  std::vector<Seen> Requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  void Handle(const httplib::Request& req, std::string query, std::string timeout,
              httplib::Response& res) {
    Seen s{req.method, std::move(query), std::move(timeout), req.get_header_value("Authorization"),
           req.get_header_value("Content-Type")};
    Responder r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen_.push_back(s);
      r = respond_;
    }
    r(s, res);
  }
  void Release() {
    std::lock_guard<std::mutex> lock(hang_mu_);
    released_ = true;
    hang_cv_.notify_all();
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Seen> seen_;
  Responder respond_ = [](const Seen&, httplib::Response& res) {
    res.set_content(R"({"status":"success","data":{"resultType":"vector","result":[]}})",
                    "application/json");
  };
  std::mutex hang_mu_;
  std::condition_variable hang_cv_;
  bool released_ = false;
};

// The names a batched query selects: LABEL=~"a|b\\.c" -> {a, b.c}.
std::vector<std::string> NamesInRegex(const std::string& query) {
  const size_t open = query.find("=~\"");
  if (open == std::string::npos) return {};
  std::vector<std::string> names(1);
  for (size_t i = open + 3; i < query.size() && query[i] != '"'; ++i) {
    if (query[i] == '\\') {  // PromQL "\\" is one regex backslash, which escapes the next char
      i += 2;
      names.back() += query[i];
    } else if (query[i] == '|') {
      names.emplace_back();
    } else {
      names.back() += query[i];
    }
  }
  return names;
}

std::string SeriesJson(const std::string& label, const std::vector<std::string>& names,
                       bool with_label = true) {
  std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += R"({"metric":{)";
    if (with_label) out += "\"" + label + "\":\"" + names[i] + "\",";
    out += R"("pod":")" + names[i] + R"(-0"},"value":[1733203200.25,")" +
           std::to_string(names[i].size()) + "\"]}";
  }
  return out + "]}}";
}

class PrometheusSourceTest : public ::testing::Test {
 protected:
  PrometheusSourceConfig Config() {
    PrometheusSourceConfig c;
    c.name = "prom";
    c.url = prom_.Url();
    c.timeout = Seconds(5);
    return c;
  }
  static MetricQuery Query(std::string signal, std::string expr, std::string name,
                           std::string ns = "serving") {
    return MetricQuery{WorkloadRef{"Deployment", std::move(ns), std::move(name)}, std::move(signal),
                       std::move(expr), Seconds(5)};
  }

  FakePrometheus prom_;
  CurlHttpClient http_;
};

TEST_F(PrometheusSourceTest, SingleQueryExpandsAndConverts) {
  prom_.RespondWith(200, Testdata("promql_vector_dcgm.json"));
  PrometheusSource src(Config(), http_);
  const MetricQuery q =
      Query("gpu_util", R"(DCGM_FI_DEV_GPU_UTIL{namespace="{namespace}",pod=~"{workload}-.*"})",
            "llm.v2");
  FetchResult r = src.Fetch(q, TimePoint{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].signal, "gpu_util");
  EXPECT_EQ((*r)[0].instance, "llm-7d9f8b6c5-x2x7q");
  EXPECT_EQ((*r)[0].value, 87);
  EXPECT_EQ((*r)[0].at, TimePoint(Seconds(1733203200.123)));
  EXPECT_EQ((*r)[2].at, TimePoint(Seconds(1733203199.5)));
  EXPECT_TRUE((*r)[1].ready);

  const auto reqs = prom_.Requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].query, R"(DCGM_FI_DEV_GPU_UTIL{namespace="serving",pod=~"llm\\.v2-.*"})");
  EXPECT_EQ(reqs[0].timeout, "5000ms");
  EXPECT_EQ(reqs[0].authorization, "");
}

// Several series of one pod (a dcgm query's GPUs, a data-parallel server's engines) are told
// apart by the labels that differ among them: by the pod's name alone they were merged into one
// arbitrary value (two GPUs at 90 and 10 read as one at 10). Identical labels stay one name.
TEST_F(PrometheusSourceTest, SeveralSeriesOfOnePodKeepTheirOwnNames) {
  prom_.RespondWith(200, R"({"status":"success","data":{"resultType":"vector","result":[)"
                         R"({"metric":{"pod":"a","gpu":"0","Hostname":"n1"},"value":[1,"90"]},)"
                         R"({"metric":{"pod":"a","gpu":"1","Hostname":"n1"},"value":[1,"10"]},)"
                         R"({"metric":{"pod":"b","gpu":"0","Hostname":"n2"},"value":[1,"80"]},)"
                         R"({"metric":{"pod":"c","job":"x"},"value":[1,"5"]},)"
                         R"({"metric":{"pod":"c","job":"x"},"value":[1,"5"]}]}})");
  PrometheusSource src(Config(), http_);
  FetchResult r = src.Fetch(Query("gpu_util", "x", "w"), TimePoint{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].instance, "a/gpu=0");
  EXPECT_EQ((*r)[1].instance, "a/gpu=1");
  EXPECT_EQ((*r)[2].instance, "b");
  EXPECT_EQ((*r)[3].instance, "c");
  EXPECT_EQ((*r)[4].instance, "c");
  EXPECT_TRUE((*r)[0].per_replica);
}

TEST_F(PrometheusSourceTest, InstanceFallsBackToInstanceThenLabels) {
  struct Case {
    std::string name;
    std::string metric;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"pod wins", R"({"pod":"p","instance":"i"})", "p"},
      {"instance next", R"({"__name__":"up","instance":"10.0.0.1:9400"})", "10.0.0.1:9400"},
      {"labels compactly, no __name__", R"({"__name__":"x","deployment":"llm","gpu":"0"})",
       "deployment=llm,gpu=0"},
      {"unlabelled", "{}", ""},
  };
  PrometheusSource src(Config(), http_);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    prom_.RespondWith(200, R"({"status":"success","data":{"resultType":"vector","result":[)"
                           R"({"metric":)" +
                               c.metric + R"(,"value":[1,"2"]}]}})");
    FetchResult r = src.Fetch(Query("s", "x", "w"), TimePoint{});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ(r->front().instance, c.want);
  }
  prom_.RespondWith(200, Testdata("promql_scalar.json"));
  FetchResult r = src.Fetch(Query("s", "scalar(x)", "w"), TimePoint{});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().instance, "");
  EXPECT_EQ(r->front().value, 2);
}

TEST_F(PrometheusSourceTest, EmptyResultIsNoObservations) {
  prom_.RespondWith(200, Testdata("promql_empty.json"));
  PrometheusSource src(Config(), http_);
  FetchResult r = src.Fetch(Query("s", "absent_metric", "w"), TimePoint{});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

// 1,000 workloads x 3 signals sharing 3 templates: one request per template.
TEST_F(PrometheusSourceTest, BatchSendsOneRequestPerTemplate) {
  prom_.Respond([](const Seen& s, httplib::Response& res) {
    const std::string label =
        s.query.find("deployment=~") != std::string::npos ? "deployment" : "app";
    res.set_content(SeriesJson(label, NamesInRegex(s.query)), "application/json");
  });
  const std::vector<std::pair<std::string, std::string>> templates = {
      {"request_rate",
       R"(sum by (pod, deployment) (rate(vllm:request_success_total{namespace="{namespace}",deployment="{workload}"}[1m])))"},
      {"queue_len",
       R"(sum by (pod, deployment) (vllm:num_requests_waiting{deployment="{workload}"}))"},
      {"kv_cache_usage", R"(max by (pod, app) (vllm:gpu_cache_usage_perc{app="{workload}"}))"},
  };
  std::vector<MetricQuery> qs;
  for (int w = 0; w < 1000; ++w) {
    const std::string name = "llm-" + std::to_string(w) + (w % 7 == 0 ? ".v2" : "");
    for (const auto& [signal, tmpl] : templates) qs.push_back(Query(signal, tmpl, name));
  }
  PrometheusSource src(Config(), http_);
  std::vector<FetchResult> out = src.FetchBatch(qs, TimePoint{});

  const auto reqs = prom_.Requests();
  EXPECT_EQ(reqs.size(), 3u);
  for (const Seen& s : reqs) {
    EXPECT_EQ(s.method, "POST");  // a 1,000-name regex is longer than a URL should be
    EXPECT_EQ(s.content_type, "application/x-www-form-urlencoded");
    EXPECT_EQ(NamesInRegex(s.query).size(), 1000u);
  }
  ASSERT_EQ(out.size(), qs.size());
  for (size_t i = 0; i < qs.size(); ++i) {
    SCOPED_TRACE(qs[i].signal + " of " + qs[i].workload.name);
    ASSERT_TRUE(out[i].ok()) << out[i].status().message();
    ASSERT_EQ(out[i]->size(), 1u);
    EXPECT_EQ(out[i]->front().signal, qs[i].signal);
    EXPECT_EQ(out[i]->front().instance, qs[i].workload.name + "-0");
    EXPECT_EQ(out[i]->front().value, static_cast<double>(qs[i].workload.name.size()));
  }
}

TEST_F(PrometheusSourceTest, SmallBatchUsesGetAndRoutesPerWorkload) {
  prom_.RespondWith(200, Testdata("promql_vector_by_deployment.json"));
  const std::string tmpl = R"(sum by (pod, deployment) (x{deployment="{workload}"}))";
  std::vector<MetricQuery> qs = {Query("a", tmpl, "llm-a"), Query("b", tmpl, "llm.b-2"),
                                 Query("c", tmpl, "llm-c")};
  PrometheusSource src(Config(), http_);
  std::vector<FetchResult> out = src.FetchBatch(qs, TimePoint{});
  const auto reqs = prom_.Requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].query, R"(sum by (pod, deployment) (x{deployment=~"llm-a|llm\\.b-2|llm-c"}))");
  ASSERT_TRUE(out[0].ok() && out[1].ok() && out[2].ok());
  ASSERT_EQ(out[0]->size(), 2u);
  EXPECT_EQ((*out[0])[1].instance, "llm-a-5c7d9-fghij");
  ASSERT_EQ(out[1]->size(), 1u);
  EXPECT_EQ(out[1]->front().value, 7);
  EXPECT_TRUE(out[2]->empty());  // no data for llm-c: missing, not an error
}

TEST_F(PrometheusSourceTest, BatchSplitsHugeRegexes) {
  prom_.Respond([](const Seen& s, httplib::Response& res) {
    res.set_content(SeriesJson("deployment", NamesInRegex(s.query)), "application/json");
  });
  PrometheusSourceConfig cfg = Config();
  cfg.max_batch_regex_bytes = 1024;
  const std::string tmpl = R"(x{deployment="{workload}"})";
  std::vector<MetricQuery> qs;
  for (int w = 0; w < 300; ++w) qs.push_back(Query("s", tmpl, "workload-" + std::to_string(w)));
  PrometheusSource src(cfg, http_);
  std::vector<FetchResult> out = src.FetchBatch(qs, TimePoint{});
  const auto reqs = prom_.Requests();
  EXPECT_GT(reqs.size(), 3u);
  EXPECT_LT(reqs.size(), 10u);
  std::set<std::string> asked;
  for (const Seen& s : reqs) {
    for (const std::string& n : NamesInRegex(s.query)) EXPECT_TRUE(asked.insert(n).second) << n;
  }
  EXPECT_EQ(asked.size(), 300u);
  for (const FetchResult& r : out) {
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->size(), 1u);
  }
}

TEST_F(PrometheusSourceTest, BatchWithoutRoutingLabelIsAClearError) {
  prom_.Respond([](const Seen& s, httplib::Response& res) {
    res.set_content(SeriesJson("deployment", NamesInRegex(s.query), /*with_label=*/false),
                    "application/json");
  });
  const std::string tmpl = R"(sum by (pod) (x{deployment="{workload}"}))";
  std::vector<MetricQuery> qs = {Query("s", tmpl, "a"), Query("s", tmpl, "b")};
  PrometheusSource src(Config(), http_);
  std::vector<FetchResult> out = src.FetchBatch(qs, TimePoint{});
  for (const FetchResult& r : out) {
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsInvalid());
    EXPECT_NE(r.status().message().find("keep deployment"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("by (pod, deployment)"), std::string::npos);
  }
  EXPECT_NE(out[1].status().message().find("of serving/b:"), std::string::npos);
}

TEST_F(PrometheusSourceTest, UnbatchableTemplatesGoOneByOne) {
  prom_.RespondWith(200, Testdata("promql_empty.json"));
  std::vector<MetricQuery> qs;
  for (int w = 0; w < 5; ++w) {
    qs.push_back(Query("s", R"(x{pod=~"{workload}-.*"})", "w" + std::to_string(w)));
  }
  qs.push_back(Query("t", R"(y{deployment="{workload}"})", "only-one"));  // a group of one
  PrometheusSourceConfig cfg = Config();
  PrometheusSource src(cfg, http_);
  std::vector<FetchResult> out = src.FetchBatch(qs, TimePoint{});
  auto reqs = prom_.Requests();
  ASSERT_EQ(reqs.size(), 6u);
  std::set<std::string> queries;
  for (const Seen& s : reqs) queries.insert(s.query);
  EXPECT_TRUE(queries.count(R"(x{pod=~"w3-.*"})"));
  EXPECT_TRUE(queries.count(R"(y{deployment="only-one"})"));
  for (const FetchResult& r : out) EXPECT_TRUE(r.ok());

  // batch: false turns batching off entirely.
  cfg.batch = false;
  PrometheusSource unbatched(cfg, http_);
  const std::string tmpl = R"(x{deployment="{workload}"})";
  unbatched.FetchBatch({Query("s", tmpl, "a"), Query("s", tmpl, "b")}, TimePoint{});
  EXPECT_EQ(prom_.Requests().size(), 8u);
}

TEST_F(PrometheusSourceTest, IdenticalQueriesShareOneRequest) {
  prom_.RespondWith(200, Testdata("promql_scalar.json"));
  std::vector<MetricQuery> qs;
  for (int w = 0; w < 5; ++w) {
    qs.push_back(Query("cluster_gpus", R"(count(DCGM_FI_DEV_GPU_UTIL{namespace="{namespace}"}))",
                       "w" + std::to_string(w)));
  }
  qs.push_back(Query("cluster_gpus", R"(count(DCGM_FI_DEV_GPU_UTIL{namespace="{namespace}"}))",
                     "w9", "prod"));
  qs.push_back(Query("nothing", "", "w0"));
  PrometheusSource src(Config(), http_);
  std::vector<FetchResult> out = src.FetchBatch(qs, TimePoint{});
  EXPECT_EQ(prom_.Requests().size(), 2u);  // one per namespace
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    ASSERT_TRUE(out[i].ok()) << out[i].status().message();
    ASSERT_EQ(out[i]->size(), 1u);
    EXPECT_EQ(out[i]->front().value, 2);
  }
  ASSERT_FALSE(out.back().ok());
  EXPECT_TRUE(out.back().status().IsInvalid());
  EXPECT_NE(out.back().status().message().find("no PromQL expression"), std::string::npos);
}

TEST_F(PrometheusSourceTest, ErrorsHaveKindsAndContext) {
  struct Case {
    std::string name;
    int status;
    std::string body;
    StatusCode code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"500 plain", 500, "internal error", StatusCode::kUnavailable, "HTTP 500"},
      {"503 timeout body", 503, Testdata("promql_error_timeout.json"),
       StatusCode::kDeadlineExceeded, "query timed out in expression evaluation"},
      {"400 bad_data", 400, Testdata("promql_error_bad_data.json"), StatusCode::kInvalid,
       "unclosed left parenthesis"},
      {"422 execution", 422, Testdata("promql_error_execution.json"), StatusCode::kUnavailable,
       "many-to-one"},
      {"malformed 200", 200, Testdata("promql_truncated.json"), StatusCode::kInvalid,
       "invalid JSON"},
  };
  PrometheusSource src(Config(), http_);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    prom_.RespondWith(c.status, c.body);
    FetchResult r = src.Fetch(Query("gpu_util", "sum(", "llm"), TimePoint{});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << r.status().message();
    EXPECT_EQ(r.status().message().rfind("unable to query prometheus prom for gpu_util of "
                                         "serving/llm: ",
                                         0),
              0u)
        << r.status().message();
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
  FetchResult r = src.Fetch(Query("gpu_util", "", "llm"), TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid());
}

TEST_F(PrometheusSourceTest, HungServerIsADeadline) {
  prom_.Hang();
  PrometheusSourceConfig cfg = Config();
  cfg.timeout = Seconds(0.3);
  PrometheusSource src(cfg, http_);
  const auto start = std::chrono::steady_clock::now();
  FetchResult r = src.Fetch(Query("s", "x", "w"), TimePoint{});
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsDeadlineExceeded()) << r.status().message();
  EXPECT_LT(took, 5.0);  // gave up by the timeout, not when the server answered (10 s)
  // The query's own, shorter timeout wins too.
  MetricQuery q = Query("s", "x", "w");
  q.timeout = Seconds(0.2);
  cfg.timeout = Seconds(30);
  PrometheusSource src2(cfg, http_);
  FetchResult r2 = src2.Fetch(q, TimePoint{});
  EXPECT_TRUE(r2.status().IsDeadlineExceeded());
  EXPECT_EQ(prom_.Requests().back().timeout, "200ms");
}

TEST_F(PrometheusSourceTest, BodyOverTheCapIsInvalid) {
  prom_.RespondWith(200, SeriesJson("deployment", std::vector<std::string>(2000, "xxxxxxxx")));
  PrometheusSourceConfig cfg = Config();
  cfg.max_body_bytes = 4096;
  PrometheusSource src(cfg, http_);
  FetchResult r = src.Fetch(Query("s", "x", "w"), TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid());
  EXPECT_NE(r.status().message().find("exceeds 4096 bytes"), std::string::npos)
      << r.status().message();
}

TEST_F(PrometheusSourceTest, ConnectionRefusedIsUnavailable) {
  PrometheusSourceConfig cfg = Config();
  {
    FakePrometheus gone;  // take a free port, then close it
    cfg.url = gone.Url();
  }
  PrometheusSource src(cfg, http_);
  FetchResult r = src.Fetch(Query("s", "x", "w"), TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsUnavailable()) << r.status().message();
}

class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("aiscale-prom-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  // Writes atomically (temp file + rename), the way a rotated secret appears.
  void Write(const std::string& name, const std::string& text) const {
    const fs::path tmp = path_ / (name + ".tmp");
    std::ofstream(tmp) << text;
    fs::rename(tmp, path_ / name);
  }

 private:
  static inline std::atomic<int> counter_{0};
  fs::path path_;
};

TEST_F(PrometheusSourceTest, BearerTokenSentRereadAndNeverInErrors) {
  TempDir dir;
  const std::string tok1 = "eyJhbGciOiJSUzI1NiJ9.first-secret-token";
  const std::string tok2 = "eyJhbGciOiJSUzI1NiJ9.second-secret-token";
  dir.Write("token", tok1 + "\n");
  PrometheusSourceConfig cfg = Config();
  cfg.bearer_token_file = (dir.path() / "token").string();
  PrometheusSource src(cfg, http_);

  prom_.RespondWith(200, Testdata("promql_empty.json"));
  ASSERT_TRUE(src.Fetch(Query("s", "x", "w"), TimePoint{}).ok());
  EXPECT_EQ(prom_.Requests().back().authorization, "Bearer " + tok1);
  ASSERT_TRUE(src.Fetch(Query("s", "x", "w"), TimePoint{}).ok());
  EXPECT_EQ(prom_.Requests().back().authorization, "Bearer " + tok1);

  dir.Write("token", tok2);
  ASSERT_TRUE(src.Fetch(Query("s", "x", "w"), TimePoint{}).ok());
  EXPECT_EQ(prom_.Requests().back().authorization, "Bearer " + tok2);

  // A server that echoes the credential back, and a refused connection: the token stays out.
  prom_.Respond([](const Seen& s, httplib::Response& res) {
    res.status = 401;
    res.set_content("bad credentials: " + s.authorization, "text/plain");
  });
  FetchResult echoed = src.Fetch(Query("s", "x", "w"), TimePoint{});
  ASSERT_FALSE(echoed.ok());
  EXPECT_TRUE(echoed.status().IsPermissionDenied()) << echoed.status().message();
  EXPECT_EQ(echoed.status().message().find("second-secret-token"), std::string::npos)
      << echoed.status().message();

  prom_.RespondWith(200, "{\"status\":");  // malformed
  FetchResult malformed = src.Fetch(Query("s", "x", "w"), TimePoint{});
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().message().find("secret-token"), std::string::npos);

  cfg.url = "http://127.0.0.1:1";
  PrometheusSource refused(cfg, http_);
  FetchResult r = refused.Fetch(Query("s", "x", "w"), TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find("secret-token"), std::string::npos);

  // A missing token file is an error that names the file, not a request without credentials.
  fs::remove(dir.path() / "token");
  const size_t before = prom_.Requests().size();
  FetchResult missing = src.Fetch(Query("s", "x", "w"), TimePoint{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("bearer_token_file"), std::string::npos);
  EXPECT_EQ(prom_.Requests().size(), before);
}

TEST_F(PrometheusSourceTest, ServesSeveralThreadsAtOnce) {
  TempDir dir;
  dir.Write("token", "concurrent-token-value");
  prom_.RespondWith(200, Testdata("promql_vector_by_deployment.json"));
  PrometheusSourceConfig cfg = Config();
  cfg.bearer_token_file = (dir.path() / "token").string();
  PrometheusSource src(cfg, http_);
  const std::string tmpl = R"(sum by (pod, deployment) (x{deployment="{workload}"}))";
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 10; ++k) {
        if (t % 2 == 0) {
          ok += src.Fetch(Query("s", tmpl, "llm-a"), TimePoint{}).ok();
        } else {
          auto out =
              src.FetchBatch({Query("s", tmpl, "llm-a"), Query("s", tmpl, "llm.b-2")}, TimePoint{});
          ok += out[0].ok() && out[1].ok() && out[1]->size() == 1;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(ok.load(), 60);
  const auto reqs = prom_.Requests();
  EXPECT_EQ(reqs.size(), 60u);
  for (const Seen& s : reqs) EXPECT_EQ(s.authorization, "Bearer concurrent-token-value");
}

TEST(PrometheusSourceConfigTest, Parses) {
  config::ConfigErrors errs;
  config::ConfigNode node = config::ParseConfig(R"(
name: prom
type: prometheus
url: http://127.0.0.1:9090/
timeout: 1500ms
bearer_token_file: /var/run/secrets/token
tls: {ca_file: /etc/ca.pem, insecure_skip_verify: true}
max_body_bytes: 16Mi
batch: false
)",
                                                "sources.yaml", errs);
  PrometheusSourceConfig c = PrometheusSourceConfig::Parse(node);
  ASSERT_TRUE(errs.empty()) << errs.ToStatus().message();
  EXPECT_EQ(c.name, "prom");
  EXPECT_EQ(c.url, "http://127.0.0.1:9090");
  EXPECT_EQ(c.timeout, Seconds(1.5));
  EXPECT_EQ(c.bearer_token_file, "/var/run/secrets/token");
  EXPECT_EQ(c.tls.ca_file, "/etc/ca.pem");
  EXPECT_TRUE(c.tls.insecure_skip_verify);
  EXPECT_EQ(c.max_body_bytes, 16u << 20);
  EXPECT_FALSE(c.batch);
}

TEST(PrometheusSourceConfigTest, RejectsBadFieldsWithPaths) {
  struct Case {
    std::string name;
    std::string yaml;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"missing url", "name: p\n", "missing required field 'url'"},
      {"bad scheme", "url: ftp://x\n", "url: must start with http://"},
      {"unknown field", "url: http://x\nurls: y\n", "unknown field 'urls'"},
      {"wrong type", "url: http://x\ntype: scrape\n", "type"},
      {"bad size", "url: http://x\nmax_body_bytes: 16 MB\n", "max_body_bytes: must be a size"},
      {"tiny size", "url: http://x\nmax_body_bytes: 10\n", "max_body_bytes"},
      {"bad timeout", "url: http://x\ntimeout: soon\n", "timeout"},
      {"tls unknown", "url: http://x\ntls: {ca: /x}\n", "tls.ca"},
      {"cert without key", "url: http://x\ntls: {cert_file: /c.pem}\n", "key_file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errs;
    PrometheusSourceConfig::Parse(config::ParseConfig(c.yaml, "s.yaml", errs));
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs.ToStatus().message().find(c.says), std::string::npos)
        << errs.ToStatus().message();
  }
  config::ConfigErrors errs;
  PrometheusSourceConfig c = PrometheusSourceConfig::Parse(
      config::ParseConfig("url: https://p\nmax_body_bytes: 1048576\nbearer_token_file: tok\n",
                          "/etc/aiscale/controller.yaml", errs));
  EXPECT_TRUE(errs.empty());
  EXPECT_EQ(c.max_body_bytes, 1048576u);
  EXPECT_EQ(c.bearer_token_file, "/etc/aiscale/tok");  // relative to the config file
}

}  // namespace
}  // namespace aiscale::monitor
