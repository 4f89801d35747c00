#include "sim/report.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "report/report_html.h"

namespace aiscale::sim {
namespace {

ScenarioResult SmallRun() {
  auto s = LoadScenario(std::string(AISCALE_SOURCE_DIR) + "/tests/golden/sim-small-training.yaml");
  EXPECT_TRUE(s.ok()) << s.status().message();
  RunOptions opt;
  opt.policies = {"training", "static"};
  auto r = RunScenario(*s, opt);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

TEST(Report, JsonHasTheRequiredShape) {
  const nlohmann::json j = ReportJson(SmallRun());
  EXPECT_EQ(j["scenario"], "sim-small-training");
  ASSERT_TRUE(j["runs"].is_array());
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["policy"], "training");
  EXPECT_EQ(j["runs"][1]["policy"], "static");
  for (const auto& run : j["runs"]) {
    SCOPED_TRACE(run["policy"].get<std::string>());
    for (const char* k :
         {"gpu_hours", "completion_time_s", "mean_gpu_util", "max_failure_replacement_s"}) {
      ASSERT_TRUE(run.contains(k)) << k;
      EXPECT_TRUE(run[k].is_number_float()) << k;
    }
    EXPECT_TRUE(run["rescales"].is_number_integer());
    EXPECT_GE(run["mean_gpu_util"].get<double>(), 0);
    EXPECT_LE(run["mean_gpu_util"].get<double>(), 1);
    ASSERT_TRUE(run["timeline"].is_array());
    ASSERT_GT(run["timeline"].size(), 10u);
    for (const char* k : {"t_s", "desired", "ready", "phase", "samples_per_s", "gpu_util"}) {
      EXPECT_TRUE(run["timeline"][0].contains(k)) << k;
    }
    EXPECT_TRUE(run["decisions"].contains("by_rule"));
    EXPECT_EQ(run["workloads"].size(), 1u);
  }
}

TEST(Report, HtmlIsSelfContained) {
  const std::string html = report::ReportHtml(BuildReport(SmallRun()));
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  // One inline script, none fetched (tests/report/report_html_test.cc checks the page).
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_NE(html.find("sim-small-training"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"nodes\" data-policy=\"training\""), std::string::npos);
  // The decision log lists the run's scaling decisions.
  EXPECT_NE(html.find("<tr data-run=\"static\">"), std::string::npos);
}

TEST(Report, WritesJsonHtmlAndDecisionLogs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "aiscale-report-test";
  fs::remove_all(dir);
  auto w = WriteReport(SmallRun(), dir.string());
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(fs::exists(w->json_path));
  EXPECT_TRUE(fs::exists(w->html_path));
  ASSERT_EQ(w->decision_logs.size(), 2u);
  std::ifstream f(w->json_path);
  auto j = nlohmann::json::parse(f, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["runs"].size(), 2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aiscale::sim

namespace aiscale::sim {
namespace {

RunResult FakeRun(const std::string& policy, double gpu_hours, double completion_s) {
  RunResult r;
  r.policy = policy;
  r.baseline = policy == "static" ? report::Baseline::kStatic : report::Baseline::kNone;
  WorkloadRun w;
  w.name = "job";
  w.summary.gpu_hours = gpu_hours;
  w.summary.completion_time_s = completion_s;
  w.summary.rescales = 2;
  r.workloads.push_back(w);
  Decision d;
  d.recommendation.rule = "hold_cooldown";
  r.decisions.push_back(d);
  r.decisions_total = 1;
  return r;
}

TEST(Report, ComparesEachPolicyToStaticAndSaysWhyNot) {
  struct Case {
    const char* name;
    double gpu_hours, completion_s;
    bool beats;
    const char* why;  // substring of why_not; empty when it beats static
  };
  const std::vector<Case> cases = {
      {"cheaper and fast enough", 70, 105, true, ""},
      {"not cheaper", 99.5, 100, false, "GPU-hours 0.995x static"},
      {"too slow", 60, 115, false, "completion 1.150x static"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ScenarioResult sr;
    sr.scenario = "t";
    sr.runs = {FakeRun("training", c.gpu_hours, c.completion_s), FakeRun("static", 100, 100)};
    const nlohmann::json j = ReportJson(sr);
    ASSERT_TRUE(j["runs"][0].contains("vs_static"));
    EXPECT_FALSE(j["runs"][1].contains("vs_static"));
    EXPECT_EQ(j["runs"][1]["baseline"], "static");
    const auto& v = j["runs"][0]["vs_static"];
    EXPECT_DOUBLE_EQ(v["gpu_hours_ratio"].get<double>(), c.gpu_hours / 100);
    EXPECT_EQ(v["beats_static"].get<bool>(), c.beats);
    if (c.beats) {
      EXPECT_FALSE(v.contains("why_not"));
    } else {
      const std::string why = v["why_not"].get<std::string>();
      EXPECT_NE(why.find(c.why), std::string::npos) << why;
      EXPECT_NE(why.find("hold_cooldown 1"), std::string::npos) << why;
    }
  }
}

}  // namespace
}  // namespace aiscale::sim
