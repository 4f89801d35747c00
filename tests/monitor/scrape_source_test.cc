#include "monitor/scrape_source.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/curl_http_client.h"
#include "core/signal.h"
#include "monitor/testdata_util.h"

namespace aiscale::monitor {
namespace {

using testing::ReadTestdata;

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; version=0.0.4; charset=utf-8";
  bool never_ends = false;  // streams forever (until the client gives up)
};

// A real HTTP server on 127.0.0.1 (ephemeral port) serving canned replies by path.
class CannedServer {
 public:
  CannedServer() {
    svr_.Get(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      Reply r;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++requests_[req.path];
        auto it = replies_.find(req.path);
        if (it == replies_.end()) {
          res.status = 404;
          return;
        }
        r = it->second;
      }
      res.status = r.status;
      if (!r.never_ends) {
        res.set_content(r.body, r.content_type.c_str());
        return;
      }
      res.set_chunked_content_provider(r.content_type.c_str(),
                                       [this](size_t, httplib::DataSink& sink) {
                                         if (stopping_) return false;
                                         sink.write("a 1\n", 4);
                                         std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                         return true;
                                       });
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~CannedServer() {
    stopping_ = true;
    svr_.stop();
    thread_.join();
  }
  void Set(const std::string& path, Reply r) {
    std::lock_guard<std::mutex> lock(mu_);
    replies_[path] = std::move(r);
  }
  void SetBody(const std::string& path, std::string body) {
    Reply r;
    r.body = std::move(body);
    Set(path, std::move(r));
  }
  int Requests(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_[path];
  }
  int port() const { return port_; }
  std::string HostPort() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string Url(const std::string& path) const { return "http://" + HostPort() + path; }

 private:
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::map<std::string, Reply> replies_;
  std::map<std::string, int> requests_;
};

ScrapeSourceConfig FixedUrls(std::vector<std::string> urls, std::string preset = "") {
  ScrapeSourceConfig c;
  c.name = "direct";
  c.preset = std::move(preset);
  c.urls = std::move(urls);
  c.timeout = Seconds(2);
  return c;
}

MetricQuery Query(std::string signal, std::string expression = "") {
  MetricQuery q;
  q.workload = WorkloadRef{"InferenceService", "ml", "chat"};
  q.signal = std::move(signal);
  q.expression = std::move(expression);
  return q;
}

class ScrapeSourceTest : public ::testing::Test {
 protected:
  CannedServer server_;
  CurlHttpClient http_;
};

TEST_F(ScrapeSourceTest, PresetSignalsShareOneScrapePerRound) {
  server_.SetBody("/metrics", ReadTestdata("vllm_v1.txt"));
  ScrapeSource src(FixedUrls({server_.Url("/metrics")}, "vllm"), http_, nullptr);
  EXPECT_EQ(src.Name(), "direct");

  auto conc = src.Fetch(Query("concurrency"), AtSeconds(100));
  ASSERT_TRUE(conc.ok()) << conc.status().message();
  ASSERT_EQ(conc->size(), 1u);
  EXPECT_EQ((*conc)[0].signal, "concurrency");
  EXPECT_EQ((*conc)[0].instance, server_.HostPort());
  EXPECT_EQ((*conc)[0].value, 3);
  EXPECT_EQ((*conc)[0].at, AtSeconds(100));
  EXPECT_TRUE((*conc)[0].ready);

  auto queue = src.Fetch(Query("queue_len"), AtSeconds(100.5));  // same round: reused
  ASSERT_TRUE(queue.ok());
  auto rate = src.Fetch(Query("request_rate"), AtSeconds(100));
  ASSERT_TRUE(rate.ok()) << rate.status().message();
  EXPECT_TRUE(rate->empty()) << "a rate needs a second scrape: missing, not zero";
  EXPECT_EQ(server_.Requests("/metrics"), 1);

  server_.SetBody("/metrics", ReadTestdata("vllm_v1_later.txt"));
  rate = src.Fetch(Query("request_rate"), AtSeconds(130));
  ASSERT_TRUE(rate.ok()) << rate.status().message();
  ASSERT_EQ(rate->size(), 1u);
  EXPECT_NEAR((*rate)[0].value, 200.0 / 30, 1e-9);
  auto ttft = src.Fetch(Query("ttft_p99_s"), AtSeconds(130));
  ASSERT_TRUE(ttft.ok());
  ASSERT_EQ(ttft->size(), 1u);
  EXPECT_NEAR((*ttft)[0].value, 1.75, 1e-9);
  auto sel = src.Fetch(Query("waiting", "vllm:num_requests_waiting{engine=\"0\"}"), AtSeconds(130));
  ASSERT_TRUE(sel.ok());
  ASSERT_EQ(sel->size(), 1u);
  EXPECT_EQ((*sel)[0].value, 2);
  EXPECT_EQ(server_.Requests("/metrics"), 2);
}

TEST_F(ScrapeSourceTest, ContentTypeChoosesTheFormat) {
  // OpenMetrics timestamps are seconds, 0.0.4 ones milliseconds: the header decides.
  server_.Set("/om", Reply{200, "a 5 1520879607.789\n# EOF\n",
                           "application/openmetrics-text; version=1.0.0; charset=utf-8", false});
  server_.Set("/prom", Reply{200, "a 5 1520879607789\n", "text/plain; version=0.0.4", false});
  for (const std::string path : {"/om", "/prom"}) {
    SCOPED_TRACE(path);
    ScrapeSource src(FixedUrls({server_.Url(path)}), http_, nullptr);
    auto got = src.Fetch(Query("a", "a"), AtSeconds(1));
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_EQ((*got)[0].at, TimePoint(std::chrono::milliseconds(1520879607789)));
  }
  server_.Set("/vllm_om", Reply{200, ReadTestdata("vllm_openmetrics.txt"),
                                "application/openmetrics-text; version=1.0.0", false});
  ScrapeSource vllm(FixedUrls({server_.Url("/vllm_om")}, "vllm"), http_, nullptr);
  auto kv = vllm.Fetch(Query("kv_cache_usage"), AtSeconds(1));
  ASSERT_TRUE(kv.ok()) << kv.status().message();
  ASSERT_EQ(kv->size(), 1u);
  EXPECT_EQ((*kv)[0].value, 0.125);
}

TEST_F(ScrapeSourceTest, ConcurrentQueriesMakeOneRequest) {
  server_.SetBody("/metrics", ReadTestdata("vllm_v1.txt"));
  ScrapeSource src(FixedUrls({server_.Url("/metrics")}, "vllm"), http_, nullptr);
  std::vector<MetricQuery> qs;
  for (const char* s : {"concurrency", "queue_len", "kv_cache_usage", "ttft_p99_s"}) {
    qs.push_back(Query(s));
  }
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (src.Fetch(qs[i % qs.size()], AtSeconds(50)).ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(server_.Requests("/metrics"), 1);
  auto batch = src.FetchBatch(qs, AtSeconds(50));
  ASSERT_EQ(batch.size(), qs.size());
  EXPECT_EQ(server_.Requests("/metrics"), 1);
}

TEST_F(ScrapeSourceTest, ReplicasFromTheResolver) {
  CannedServer second;
  server_.SetBody("/metrics", ReadTestdata("vllm_v1.txt"));
  second.SetBody("/metrics", ReadTestdata("vllm_v0.txt"));
  ScrapeSourceConfig cfg = FixedUrls({}, "vllm");
  cfg.replicas = true;
  WorkloadRef seen;
  EndpointResolver resolver = [&](const WorkloadRef& w) -> Result<std::vector<ReplicaEndpoint>> {
    seen = w;
    return std::vector<ReplicaEndpoint>{{"llm-0", "127.0.0.1", server_.port(), true},
                                        {"llm-1", "127.0.0.1", second.port(), false}};
  };
  ScrapeSource src(cfg, http_, resolver);
  auto got = src.Fetch(Query("kv_cache_usage"), AtSeconds(10));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(seen.Key(), "ml/chat");
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].instance, "llm-0");
  EXPECT_TRUE((*got)[0].ready);
  EXPECT_EQ((*got)[1].instance, "llm-1");
  EXPECT_FALSE((*got)[1].ready);
  EXPECT_EQ((*got)[1].value, 0.125);  // v0 server: the old gauge name
}

TEST_F(ScrapeSourceTest, ResolverProblems) {
  ScrapeSourceConfig cfg = FixedUrls({}, "vllm");
  cfg.replicas = true;
  struct Case {
    std::string name;
    EndpointResolver resolver;
    StatusCode want;
  };
  const std::vector<Case> cases = {
      {"no actuator reports endpoints", nullptr, StatusCode::kInvalid},
      {"no replicas",
       [](const WorkloadRef&) -> Result<std::vector<ReplicaEndpoint>> {
         return std::vector<ReplicaEndpoint>{};
       },
       StatusCode::kNotFound},
      {"resolver error passed on",
       [](const WorkloadRef&) -> Result<std::vector<ReplicaEndpoint>> {
         return Status::Unavailable("api server down");
       },
       StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ScrapeSource src(cfg, http_, c.resolver);
    auto got = src.Fetch(Query("concurrency"), AtSeconds(1));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.want) << got.status().message();
    EXPECT_NE(got.status().message().find("unable to get concurrency for ml/chat"),
              std::string::npos);
  }
}

TEST_F(ScrapeSourceTest, TargetFailuresHaveKinds) {
  server_.Set("/500", Reply{500, "boom", "text/plain", false});
  server_.SetBody("/malformed", "# TYPE a gauge\na{x=1} 2\n");
  server_.Set("/never_ends", Reply{200, "", "text/plain", true});
  server_.SetBody("/huge", std::string(64 * 1024, '#') + "\n");
  server_.Set("/om_no_eof",
              Reply{200, "a 1\n", "application/openmetrics-text; version=1.0.0", false});
  struct Case {
    std::string name;
    std::string url;
    StatusCode want;
    std::string detail;
  };
  const std::vector<Case> cases = {
      {"5xx", server_.Url("/500"), StatusCode::kUnavailable, "HTTP 500"},
      {"404", server_.Url("/nothing"), StatusCode::kNotFound, "HTTP 404"},
      {"malformed body", server_.Url("/malformed"), StatusCode::kInvalid, "line 2"},
      {"body that never ends", server_.Url("/never_ends"), StatusCode::kDeadlineExceeded, ""},
      {"body over max_body_bytes", server_.Url("/huge"), StatusCode::kInvalid, ""},
      {"OpenMetrics without # EOF", server_.Url("/om_no_eof"), StatusCode::kInvalid, "EOF"},
      {"connection refused", "http://127.0.0.1:1/metrics", StatusCode::kUnavailable, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ScrapeSourceConfig cfg = FixedUrls({c.url});
    cfg.timeout = Seconds(0.5);
    cfg.max_body_bytes = 16 * 1024;
    ScrapeSource src(cfg, http_, nullptr);
    auto got = src.Fetch(Query("x", "a"), AtSeconds(1));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.want) << got.status().message();
    EXPECT_NE(got.status().message().find(c.url), std::string::npos) << got.status().message();
    EXPECT_NE(got.status().message().find(c.detail), std::string::npos) << got.status().message();
  }
}

TEST_F(ScrapeSourceTest, SomeTargetsFailOthersAnswer) {
  server_.SetBody("/ok", "# TYPE a gauge\na 4\n");
  server_.Set("/500", Reply{503, "", "text/plain", false});
  ScrapeSource src(FixedUrls({server_.Url("/500"), server_.Url("/ok")}), http_, nullptr);
  auto got = src.Fetch(Query("x", "a"), AtSeconds(1));
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].value, 4);
  // A cached error is reused within the round: no second request to the failing target.
  EXPECT_TRUE(src.Fetch(Query("y", "a"), AtSeconds(1)).ok());
  EXPECT_EQ(server_.Requests("/500"), 1);
}

TEST_F(ScrapeSourceTest, VanishingMetricsAndNaN) {
  server_.SetBody("/m", "# TYPE g gauge\ng NaN\n# TYPE c counter\nc_total 10\n");
  ScrapeSource src(FixedUrls({server_.Url("/m")}), http_, nullptr);
  auto g = src.Fetch(Query("g", "g"), AtSeconds(0));
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->size(), 1u);
  EXPECT_TRUE(std::isnan((*g)[0].value)) << "NaN is passed through; core filters it";
  EXPECT_TRUE(src.Fetch(Query("c", "c"), AtSeconds(0))->empty());

  server_.SetBody("/m", "# TYPE other gauge\nother 1\n");  // both metrics vanish
  auto gone = src.Fetch(Query("g", "g"), AtSeconds(15));
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.status().IsNotFound()) << gone.status().message();
  EXPECT_FALSE(src.Fetch(Query("c", "c"), AtSeconds(15)).ok());

  server_.SetBody("/m", "# TYPE c counter\nc_total 40\n");  // the counter is back, 30 s later
  auto c = src.Fetch(Query("c", "c"), AtSeconds(30));
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->size(), 1u);
  EXPECT_NEAR((*c)[0].value, 1.0, 1e-9) << "rate from the last scrape that had it";
}

TEST_F(ScrapeSourceTest, DcgmInstancesNameHostAndGpu) {
  struct Case {
    std::string file;
    std::vector<std::string> instances;
  };
  const std::vector<Case> cases = {
      {"dcgm_exporter_v3.txt", {"node3/gpu0", "node3/gpu1"}},
      {"dcgm_hostname_lower.txt", {"gpu-node-7/gpu0", "gpu-node-7/gpu1"}},
      {"dcgm_exporter_v2_k8s.txt", {server_.HostPort() + "/gpu0"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    server_.SetBody("/" + c.file, ReadTestdata(c.file));
    ScrapeSource src(FixedUrls({server_.Url("/" + c.file)}, "dcgm"), http_, nullptr);
    auto got = src.Fetch(Query("gpu_util"), AtSeconds(1));
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->size(), c.instances.size());
    for (size_t i = 0; i < c.instances.size(); ++i) {
      EXPECT_EQ((*got)[i].instance, c.instances[i]);
    }
  }
}

TEST_F(ScrapeSourceTest, SeveralSeriesGetTheirLabelInTheInstance) {
  server_.SetBody("/m",
                  "g{engine=\"0\",model_name=\"m\"} 1\ng{engine=\"1\",model_name=\"m\"} 2\n"
                  "h{a=\"x\",b=\"1\"} 1\nh{a=\"x\",b=\"2\"} 2\n");
  ScrapeSource src(FixedUrls({server_.Url("/m")}), http_, nullptr);
  auto g = src.Fetch(Query("g", "g"), AtSeconds(1));
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->size(), 2u);
  EXPECT_EQ((*g)[1].instance, server_.HostPort() + "/1");
  auto h = src.Fetch(Query("h", "h"), AtSeconds(1));
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[0].instance, server_.HostPort() + "/b=1");
  auto sum = src.Fetch(Query("h", "sum(h)"), AtSeconds(1));
  ASSERT_TRUE(sum.ok());
  ASSERT_EQ(sum->size(), 1u);
  EXPECT_EQ((*sum)[0].instance, server_.HostPort());
  EXPECT_EQ((*sum)[0].value, 3);
}

TEST_F(ScrapeSourceTest, QueriesItCannotAnswer) {
  server_.SetBody("/m", "a 1\n");
  struct Case {
    std::string name;
    std::string preset;
    MetricQuery q;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"no preset, no expression", "", Query("concurrency"), "needs an expression"},
      {"preset lacks the signal", "vllm", Query("gpu_util"), "no mapping for signal gpu_util"},
      {"bad selector", "", Query("x", "rate(a[5m])"), "invalid metric selector"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ScrapeSource src(FixedUrls({server_.Url("/m")}, c.preset), http_, nullptr);
    auto got = src.Fetch(c.q, AtSeconds(1));
    ASSERT_FALSE(got.ok());
    EXPECT_TRUE(got.status().IsInvalid());
    EXPECT_NE(got.status().message().find(c.want), std::string::npos) << got.status().message();
  }
  EXPECT_EQ(server_.Requests("/m"), 0);
}

TEST_F(ScrapeSourceTest, WindowPicksTheBaseline) {
  ScrapeSourceConfig cfg = FixedUrls({server_.Url("/c")});
  cfg.window = Seconds(30);
  ScrapeSource src(cfg, http_, nullptr);
  // Readings every 10 s: 0, 10, 20, 30, 100 (a burst at the end).
  const std::vector<double> values = {0, 10, 20, 30, 100};
  double last = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    server_.SetBody("/c", "# TYPE c counter\nc_total " + std::to_string(values[i]) + "\n");
    auto got = src.Fetch(Query("c", "c"), AtSeconds(10.0 * static_cast<double>(i)));
    ASSERT_TRUE(got.ok());
    if (i > 0) last = got->at(0).value;
  }
  // At t = 40 the baseline is the scrape at t = 10: (100 - 10) / 30 s.
  EXPECT_NEAR(last, 3.0, 1e-9);
}

// A target scraped again after more than two windows (an outage, or a new process on a
// reused port): no rate against the old counter, whose baseline is minutes old (20 req/s read
// as 1); the next scrape within the window gives it.
TEST_F(ScrapeSourceTest, NoRateAgainstABaselineOlderThanTwoWindows) {
  ScrapeSourceConfig cfg = FixedUrls({server_.Url("/c")});
  cfg.window = Seconds(30);
  ScrapeSource src(cfg, http_, nullptr);
  server_.SetBody("/c", "# TYPE c counter\nc_total 5000\n");
  ASSERT_TRUE(src.Fetch(Query("c", "c"), AtSeconds(1000)).ok());
  server_.SetBody("/c", "# TYPE c counter\nc_total 300\n");  // a new process, 15 s at 20/s
  auto got = src.Fetch(Query("c", "c"), AtSeconds(1300));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(got->empty()) << got->at(0).value;
  server_.SetBody("/c", "# TYPE c counter\nc_total 600\n");
  got = src.Fetch(Query("c", "c"), AtSeconds(1315));
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_NEAR(got->at(0).value, 20.0, 1e-9);
}

TEST(ScrapeSourceConfigTest, Parse) {
  struct Case {
    std::string name;
    std::string yaml;
    std::string error;  // substring of the first error; empty when valid
  };
  const std::vector<Case> cases = {
      {"replicas", "name: direct\ntype: scrape\npreset: vllm\ntargets: replicas\n", ""},
      {"urls and sizes",
       "name: d\ntype: scrape\ntargets: [http://127.0.0.1:9400/metrics]\ntimeout: 500ms\n"
       "max_body_bytes: 512Ki\nwindow: 1m\n",
       ""},
      {"unknown field", "name: d\ntargets: replicas\nbogus: 1\n", "unknown field 'bogus'"},
      {"missing targets", "name: d\n", "missing required field 'targets'"},
      {"bad target", "name: d\ntargets: [ftp://x]\n", "targets[0]: must be a URL"},
      {"bad targets", "name: d\ntargets: pods\n", "must be 'replicas' or a list of URLs"},
      {"bad preset", "name: d\ntargets: replicas\npreset: triton\n", "must be one of"},
      {"bad size", "name: d\ntargets: replicas\nmax_body_bytes: lots\n", "must be a size"},
      {"tiny size", "name: d\ntargets: replicas\nmax_body_bytes: 10\n", "between 1Ki and 1Gi"},
      {"bad path", "name: d\ntargets: replicas\npath: metrics\n", "must start with '/'"},
      {"bad window", "name: d\ntargets: replicas\nwindow: 0s\n", "window"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errs;
    config::ConfigNode node = config::ParseConfig(c.yaml, "c.yaml", errs);
    ScrapeSourceConfig cfg = ScrapeSourceConfig::Parse(node);
    if (c.error.empty()) {
      EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
    } else {
      ASSERT_FALSE(errs.empty());
      EXPECT_NE(errs.all()[0].ToString().find(c.error), std::string::npos)
          << errs.all()[0].ToString();
    }
  }
  config::ConfigErrors errs;
  auto cfg = ScrapeSourceConfig::Parse(config::ParseConfig(
      "name: d\ntargets: [http://a:1/m, https://b/m]\ntimeout: 500ms\nmax_body_bytes: 512Ki\n"
      "window: 1m\n",
      "c.yaml", errs));
  EXPECT_TRUE(errs.empty());
  EXPECT_EQ(cfg.name, "d");
  EXPECT_EQ(cfg.urls.size(), 2u);
  EXPECT_FALSE(cfg.replicas);
  EXPECT_EQ(cfg.timeout, Seconds(0.5));
  EXPECT_EQ(cfg.max_body_bytes, 512u * 1024);
  EXPECT_EQ(cfg.window, Seconds(60));
  auto mi = ScrapeSourceConfig::Parse(
      config::ParseConfig("targets: replicas\nmax_body_bytes: 16Mi\n", "c.yaml", errs));
  EXPECT_EQ(mi.max_body_bytes, 16u << 20);
  EXPECT_TRUE(mi.replicas);
  EXPECT_EQ(mi.path, "/metrics");
  auto num = ScrapeSourceConfig::Parse(
      config::ParseConfig("targets: replicas\nmax_body_bytes: 1000000\n", "c.yaml", errs));
  EXPECT_EQ(num.max_body_bytes, 1000000u);
  EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
}

}  // namespace
}  // namespace aiscale::monitor
