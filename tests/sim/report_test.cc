#include "sim/report.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/report_html.h"

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
  const std::string html = ReportHtml(ReportJson(SmallRun()));
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_NE(html.find("<script type=\"application/json\" id=\"data\">"), std::string::npos);
  EXPECT_NE(html.find("sim-small-training"), std::string::npos);
  // The inline data cannot close its script element early.
  const size_t data = html.find("id=\"data\">");
  const size_t end = html.find("</script>", data);
  EXPECT_EQ(html.substr(data, end - data).find('<'), std::string::npos);
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
