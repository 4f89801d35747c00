// The Grafana dashboard and the Prometheus alert rules in deploy/monitoring read only metrics
// that aiscale really exports. The exported names come from a real `aiscale run` (the built
// binary) on the ConfigMap's own config, with its Kubernetes target pointed at the fake API
// server and its Prometheus at a closed port: every family the daemon declares is in /metrics
// (a declared family is rendered even before its first sample). Names Prometheus adds itself
// (`up`) are the only others allowed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
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

#include "deploy/manifests.h"
#include "deploy/promql_names.h"
#include "fakes/fake_kube_apiserver.h"
#include "fakes/yaml_json.h"

namespace aiscale::deploy_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Series Prometheus makes for every scrape target; aiscale does not export them.
const std::set<std::string> kPrometheusSynthetic = {"up"};

TEST(DeployMetricNamesIn, FindsTheMetricsAnExpressionReads) {
  struct Case {
    const char* expr;
    std::set<std::string> want;
  };
  const std::vector<Case> cases = {
      {R"(up{job="aiscale"} == 0)", {"up"}},
      {R"(absent(up{job="aiscale"} == 1))", {"up"}},
      {R"(histogram_quantile(0.99, sum by (source, le) (rate(x_bucket{job="a"}[$__rate_interval]))))",
       {"x_bucket"}},
      {"sum(rate(a_total[5m])) == 0 and on() sum(b) > 0", {"a_total", "b"}},
      {"max by (w) (d) >= on(w) group_left(pod) max without (instance) (m)", {"d", "m"}},
      {R"(vllm:num_requests_running{pod=~"x-.*"} offset 5m)", {"vllm:num_requests_running"}},
      {R"({__name__="foo", job="x"})", {"foo"}},
      {R"x(label_replace(m, "dst", "$1", "src", "(.*)"))x", {"m"}},
      {R"(count_values("version", build_info) * 1e3 - 0.5)", {"build_info"}},
      {"sum(rate(c[5m:1m] @ 100)) / ${scale}", {"c"}},
      {"topk(3, sum by (rule) (increase(d_total[1h])))", {"d_total"}},
      {R"(x{a="}{[(\"quote"} unless y)", {"x", "y"}},
      {"1 + 2", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expr);
    EXPECT_EQ(MetricNamesIn(c.expr), c.want);
  }
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// Families by name from `# TYPE name type` lines of an exposition.
std::map<std::string, std::string> Families(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string hash, type_word, name, type;
    if (words >> hash >> type_word >> name >> type && hash == "#" && type_word == "TYPE") {
      out[name] = type;
    }
  }
  return out;
}

// The value of the sample line that starts with `series` ("name{labels}"), or -1.
double Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// `aiscale run` on the ConfigMap's config, once for the suite: its /metrics after one tick.
class DeployExportedMetrics : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(::testing::TempDir()) / ("aiscale_deploy_metrics_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    testing::FakeKubeApiServer api;
    ASSERT_TRUE(api.Start());
    config_ = YAML::Load(EmbeddedConfig(LoadManifests()));
    WriteRunnableConfig(api);
    const int port = config_["spec"]["server"]["port"].as<int>();
    const pid_t pid = Launch();
    ASSERT_GT(pid, 0);
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(1);
    for (int i = 0; i < 300 && Sample(metrics_, "aiscale_ticks_total") < 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (auto res = client.Get("/metrics"); res && res->status == 200) metrics_ = res->body;
    }
    Stop(pid);
    EXPECT_GE(Sample(metrics_, "aiscale_ticks_total"), 1)
        << "aiscale run made no tick in 30 s; its log:\n"
        << ReadLog() << "\n/metrics:\n"
        << metrics_;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // The deployed config, made to run here: its server on a free loopback port, its store in a
  // temp dir, Prometheus at a closed port (fetches fail: missing data, no scale-down), each
  // Kubernetes target through a kubeconfig for the fake holding its Deployment. The
  // leader_election block, once the ConfigMap has one, is dropped: it would need the
  // in-cluster Lease API; the rest of the config runs as shipped.
  static void WriteRunnableConfig(testing::FakeKubeApiServer& api) {
    YAML::Node spec = config_["spec"];
    spec.remove("leader_election");
    spec["server"]["host"] = "127.0.0.1";
    spec["server"]["port"] = FreePort();
    spec["store"] = (dir_ / "store.db").string();
    for (YAML::Node src : spec["sources"]) {
      if (src["type"].as<std::string>("") == "prometheus") {
        src["url"] = "http://127.0.0.1:" + std::to_string(FreePort());
      }
    }
    std::ofstream(dir_ / "kubeconfig") << testing::FakeKubeconfig(api.Url());
    for (YAML::Node w : spec["workloads"]) {
      YAML::Node t = w["target"];
      if (t["engine"].as<std::string>("") != "kubernetes") continue;
      YAML::Node auth;
      auth["kubeconfig"] = (dir_ / "kubeconfig").string();
      t["auth"] = auth;
      api.AddDeployment(t["namespace"].as<std::string>(), t["name"].as<std::string>(), 2, 2, 1);
    }
    // The AIScalers it watches: deploy/'s CRD and example, with the example's Deployment.
    if (YAML::Node ais = spec["aiscalers"]) {
      YAML::Node auth;
      auth["kubeconfig"] = (dir_ / "kubeconfig").string();
      ais["auth"] = auth;
      api.AddCrd(testing::YamlToJson(YAML::LoadFile(DeployDir() + "/06-aiscaler-crd.yaml")));
      json example = testing::YamlToJson(YAML::LoadFile(DeployDir() + "/examples/aiscaler.yaml"));
      example["metadata"]["namespace"] = ais["namespaces"][0].as<std::string>("default");
      api.CreateCustom(example);
      api.AddDeployment(example["metadata"]["namespace"].get<std::string>(),
                        example["spec"]["scaleTargetRef"]["name"].get<std::string>(), 1, 1, 1);
    }
    api.AddNode("gpu-a", 8);
    YAML::Emitter out;
    out << config_;
    std::ofstream(dir_ / "config.yaml") << out.c_str() << "\n";
  }

  static pid_t Launch() {
    // Everything that allocates happens before fork: the child only opens, dups and execs.
    const std::string log = (dir_ / "aiscale.log").string();
    const std::string cfg = (dir_ / "config.yaml").string();
    const pid_t pid = fork();
    if (pid != 0) return pid;
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    execl(AISCALE_BINARY, AISCALE_BINARY, "run", "-c", cfg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }

  static void Stop(pid_t pid) {
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }

  static std::string ReadLog() {
    std::ifstream in(dir_ / "aiscale.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Names in `names` that neither aiscale exports nor Prometheus makes.
  static std::vector<std::string> Unknown(const std::set<std::string>& names) {
    const std::map<std::string, std::string> families = Families(metrics_);
    std::vector<std::string> out;
    for (const std::string& n : names) {
      if (families.count(n) || kPrometheusSynthetic.count(n)) continue;
      bool series_of_histogram = false;
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        const std::string sfx(suffix);
        if (n.size() > sfx.size() && n.compare(n.size() - sfx.size(), sfx.size(), sfx) == 0) {
          auto it = families.find(n.substr(0, n.size() - sfx.size()));
          series_of_histogram |= it != families.end() && it->second == "histogram";
        }
      }
      if (!series_of_histogram) out.push_back(n);
    }
    return out;
  }

  static inline fs::path dir_;
  static inline YAML::Node config_;
  static inline std::string metrics_;
};

// Every PromQL string of a dashboard: panel targets' `expr`, and the metric of templating
// queries (`label_values(metric{...}, label)`).
void CollectExprs(const json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, v] : j.items()) {
      if (key == "expr" && v.is_string()) out.push_back(v.get<std::string>());
      CollectExprs(v, out);
    }
  } else if (j.is_array()) {
    for (const json& v : j) CollectExprs(v, out);
  }
}

std::vector<std::string> TemplatingExprs(const json& dashboard) {
  std::vector<std::string> out;
  static const std::regex kLabelValues(R"(^\s*label_values\((.*),\s*[a-zA-Z_]\w*\s*\)\s*$)");
  for (const json& v : dashboard.value("/templating/list"_json_pointer, json::array())) {
    if (v.value("type", "") != "query") continue;
    const json q = v.value("query", json());
    const std::string text = q.is_string() ? q.get<std::string>() : q.value("query", "");
    std::smatch m;
    if (std::regex_match(text, m, kLabelValues)) {
      out.push_back(m[1]);
    } else {
      ADD_FAILURE() << "templating query this test cannot read: " << text;
    }
  }
  return out;
}

json Dashboard() {
  std::ifstream in(DeployDir() + "/monitoring/grafana-dashboard.json");
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::vector<std::string> RuleExprs() {
  std::vector<std::string> out;
  const YAML::Node rules = YAML::LoadFile(DeployDir() + "/monitoring/aiscale-rules.yaml");
  for (const YAML::Node& g : rules["groups"]) {
    for (const YAML::Node& r : g["rules"]) out.push_back(r["expr"].as<std::string>());
  }
  return out;
}

TEST_F(DeployExportedMetrics, TheDaemonExportsItsFamiliesAndWorkloadBounds) {
  const auto families = Families(metrics_);
  EXPECT_EQ(families.count("aiscale_ticks_total"), 1u);
  EXPECT_EQ(families.count("aiscale_api_requests_total"), 1u);
  // The AIScaler families the AIScaler alert and panels read.
  for (const char* f : {"aiscale_aiscaler_condition", "aiscale_aiscalers",
                        "aiscale_watch_restarts_total", "aiscale_aiscaler_status_writes_total"}) {
    EXPECT_EQ(families.count(f), 1u) << f;
  }
  // The bounds the at-max alert compares with, for each workload of the config.
  for (const YAML::Node& w : config_["spec"]["workloads"]) {
    const std::string ns = w["namespace"].as<std::string>("");
    const std::string key = (ns.empty() ? "" : ns + "/") + w["name"].as<std::string>();
    SCOPED_TRACE(key);
    EXPECT_EQ(Sample(metrics_, "aiscale_workload_max_replicas{workload=\"" + key + "\"}"),
              w["max_replicas"].as<double>());
    EXPECT_EQ(Sample(metrics_, "aiscale_workload_min_replicas{workload=\"" + key + "\"}"),
              w["min_replicas"].as<double>());
  }
}

TEST_F(DeployExportedMetrics, DashboardUsesOnlyExportedMetrics) {
  const json dashboard = Dashboard();
  ASSERT_TRUE(dashboard.is_object()) << "grafana-dashboard.json is not valid JSON";
  std::vector<std::string> exprs;
  CollectExprs(dashboard["panels"], exprs);
  ASSERT_GE(exprs.size(), 10u) << "the dashboard's panels should carry PromQL targets";
  for (const std::string& e : TemplatingExprs(dashboard)) exprs.push_back(e);
  std::set<std::string> used;
  for (const std::string& e : exprs) {
    SCOPED_TRACE(e);
    const std::set<std::string> names = MetricNamesIn(e);
    EXPECT_FALSE(names.empty()) << "an expression that reads no metric";
    for (const std::string& bad : Unknown(names)) ADD_FAILURE() << "not exported: " << bad;
    used.insert(names.begin(), names.end());
  }
  // The dashboard shows each workload's replicas and bounds.
  for (const char* n : {"aiscale_workload_current_replicas", "aiscale_workload_max_replicas",
                        "aiscale_apply_errors_total", "aiscale_ticks_total"}) {
    EXPECT_EQ(used.count(n), 1u) << n;
  }
}

TEST_F(DeployExportedMetrics, AlertRulesUseOnlyExportedMetrics) {
  const std::vector<std::string> exprs = RuleExprs();
  ASSERT_GE(exprs.size(), 6u);
  for (const std::string& e : exprs) {
    SCOPED_TRACE(e);
    const std::set<std::string> names = MetricNamesIn(e);
    EXPECT_FALSE(names.empty());
    for (const std::string& bad : Unknown(names)) ADD_FAILURE() << "not exported: " << bad;
  }
}

TEST_F(DeployExportedMetrics, UnknownNamesAreCaught) {
  // The check itself: a misspelt counter, a histogram suffix on a counter, a made-up name.
  EXPECT_EQ(Unknown({"aiscale_tick_total", "aiscale_ticks_total_bucket", "aiscale_leader_changes"}),
            (std::vector<std::string>{"aiscale_leader_changes", "aiscale_tick_total",
                                      "aiscale_ticks_total_bucket"}));
  EXPECT_TRUE(Unknown({"up", "aiscale_tick_duration_seconds_bucket",
                       "aiscale_fetch_duration_seconds_count"})
                  .empty());
}

// The dashboard's PromQL parses: each expression, Grafana's variables given values, becomes a
// recording rule that `promtool check rules` must accept.
TEST(DeployDashboardPromql, ParsesWithPromtool) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool (Debian package prometheus) not installed";
  }
  std::vector<std::string> exprs;
  CollectExprs(Dashboard()["panels"], exprs);
  ASSERT_FALSE(exprs.empty());
  YAML::Node rules;
  YAML::Node group;
  group["name"] = "dashboard";
  for (size_t i = 0; i < exprs.size(); ++i) {
    std::string e = std::regex_replace(exprs[i], std::regex(R"(\$__rate_interval)"), "5m");
    e = std::regex_replace(e, std::regex(R"(\$\{?workload\}?)"), ".*");
    YAML::Node r;
    r["record"] = "dashboard:expr_" + std::to_string(i);
    r["expr"] = e;
    group["rules"].push_back(r);
  }
  rules["groups"].push_back(group);
  const fs::path file = fs::path(::testing::TempDir()) /
                        ("aiscale_dashboard_rules_" + std::to_string(getpid()) + ".yaml");
  YAML::Emitter out;
  out << rules;
  std::ofstream(file) << out.c_str() << "\n";
  const std::string cmd = "promtool check rules " + file.string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) output += buf;
  const int rc = pclose(p);
  fs::remove(file);
  EXPECT_EQ(rc, 0) << output;
}

}  // namespace
}  // namespace aiscale::deploy_test
