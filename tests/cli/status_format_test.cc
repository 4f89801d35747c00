// `aiscale status` text from the API's own JSON (built here by the server's json_views from a
// view, so the two cannot drift): the table's columns and values, the describe view, and
// missing fields printing "-" rather than failing.
#include "cli/status_format.h"

#include <gtest/gtest.h>

#include "server/fake_live_view.h"
#include "server/json_views.h"

namespace aiscale::cli {
namespace {

using aiscale::testing::ApiDecision;
using aiscale::testing::ApiWorkload;

nlohmann::json List(const std::vector<WorkloadView>& ws) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& w : ws) items.push_back(server::WorkloadSummaryJson(w));
  return {{"count", ws.size()}, {"workloads", items}};
}

// The line of `text` that starts with `prefix`, split on runs of 3+ spaces.
std::vector<std::string> Columns(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::vector<std::string> cols;
    size_t i = 0;
    while (i < line.size()) {
      size_t gap = line.find("   ", i);
      if (gap == std::string::npos) gap = line.size();
      cols.push_back(line.substr(i, gap - i));
      i = line.find_first_not_of(' ', gap);
      if (i == std::string::npos) break;
    }
    return cols;
  }
  return {};
}

TEST(StatusTable, OneRowPerWorkloadWithTheApiValues) {
  WorkloadView llm = ApiWorkload("serving", "llm", 4);
  llm.min_replicas = 1;
  llm.max_replicas = 8;
  llm.desired = 5;
  llm.last->recommendation.facts.push_back({"concurrency.target", 24});
  llm.rule_since_s = 1000;
  WorkloadView bert = ApiWorkload("batch", "bert", 2);
  bert.steering.mode = SteerMode::kPaused;
  bert.last->constrain_reason = "paused by API: stays at 2 (the pipeline asked for 4)";
  const std::string text = StatusTable(List({llm, bert}), 1000 + 300);
  const auto header = Columns(text, "NAME");
  ASSERT_EQ(header.size(), 12u) << text;
  EXPECT_EQ(header[3], "SIGNALS (current/target)");
  const auto row = Columns(text, "serving/llm");
  ASSERT_EQ(row.size(), 12u) << text;
  EXPECT_EQ(row[1], "kubernetes");
  EXPECT_EQ(row[2], "hpa");
  EXPECT_EQ(row[3], "concurrency: 30/24, kv_cache_usage: <stale>");
  EXPECT_EQ(row[4], "1");
  EXPECT_EQ(row[5], "8");
  EXPECT_EQ(row[6], "5");
  EXPECT_EQ(row[9], "hpa_ratio");
  EXPECT_EQ(row[10], "5m");
  EXPECT_EQ(row[11], "SignalsFresh=False(SignalMissingOrStale)");
  // An override that did not change the size is in force but does not limit.
  WorkloadView grew = bert;
  grew.last->constrain_reason = "paused by API (scale-down only): stays at 5";
  const std::string text2 = StatusTable(List({grew}), 0);
  const std::string grew_conditions = Columns(text2, "batch/bert").at(11);
  EXPECT_EQ(grew_conditions.find("ScalingLimited"), std::string::npos) << grew_conditions;
  EXPECT_NE(grew_conditions.find("Paused(PausedByOperator)"), std::string::npos);
  const auto paused = Columns(text, "batch/bert");
  ASSERT_EQ(paused.size(), 12u);
  EXPECT_NE(paused[11].find("ScalingLimited(Paused)"), std::string::npos) << paused[11];
  EXPECT_NE(paused[11].find("Paused(PausedByOperator)"), std::string::npos) << paused[11];
}

// An AIScaler's pause annotation (decide::PausedConstraints' reason) shows as the operator's
// pause does: Paused=True, and ScalingLimited only while it held the size.
TEST(StatusTable, AnnotationHoldsShowAsPaused) {
  struct Case {
    const char* reason;
    const char* want_paused;   // "" : no Paused condition
    const char* want_limited;  // "" : not limited
  };
  const std::vector<Case> cases = {
      {"paused by annotation aiscale.dev/paused (would be 5)", "Paused(PausedByAnnotation)",
       "ScalingLimited(Paused)"},
      {"max_replicas 8; pinned at 3 replicas by annotation aiscale.dev/paused-replicas (would be "
       "8)",
       "Paused(PausedByAnnotation)", "ScalingLimited(Pinned)"},
      {"paused by annotation aiscale.dev/paused", "Paused(PausedByAnnotation)", ""},
      {"max_replicas 8", "", "ScalingLimited(TooManyReplicas)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    WorkloadView w = ApiWorkload("serving", "llm", 4);
    w.last->constrain_reason = c.reason;
    const std::string conditions = Columns(StatusTable(List({w}), 0), "serving/llm").at(11);
    EXPECT_EQ(conditions.find("Paused(") != std::string::npos, *c.want_paused != 0) << conditions;
    if (*c.want_paused) {
      EXPECT_NE(conditions.find(c.want_paused), std::string::npos);
    }
    EXPECT_EQ(conditions.find("ScalingLimited") != std::string::npos, *c.want_limited != 0)
        << conditions;
    if (*c.want_limited) {
      EXPECT_NE(conditions.find(c.want_limited), std::string::npos);
    }
  }
  WorkloadView w = ApiWorkload("serving", "llm", 4);
  w.last->constrain_reason = "max_replicas 8; paused by annotation aiscale.dev/paused (would be 9)";
  const std::string text = DescribeText(server::WorkloadDetailJson(w), nlohmann::json::array(), 0);
  EXPECT_NE(text.find("paused by annotation aiscale.dev/paused (would be 9)"), std::string::npos)
      << text;
}

TEST(StatusTable, MissingFieldsPrintADash) {
  const std::string text = StatusTable({{"workloads", {{{"key", "x"}}}}}, 0);
  const auto row = Columns(text, "x");
  ASSERT_EQ(row.size(), 12u) << text;
  EXPECT_EQ(row[1], "-");
  EXPECT_EQ(StatusTable(nlohmann::json::array(), 0).find("NAME"), 0u);
}

TEST(DescribeText, SignalsConditionsAndRecentDecisions) {
  WorkloadView w = ApiWorkload("serving", "llm", 4);
  w.min_replicas = 2;
  w.max_replicas = 6;
  nlohmann::json d = server::DecisionListJson(
      "serving/llm", {ApiDecision("serving/llm", 90, 2), ApiDecision("serving/llm", 60, 1)});
  const std::string text = DescribeText(server::WorkloadDetailJson(w), d, 1'790'000'100);
  for (const char* want :
       {"Name:            serving/llm", "Max replicas:    6", "Override:        none",
        "  AbleToScale", "  ScalingLimited", "  concurrency", "prometheus",
        "Recent decisions (newest first):", "3->6", "hpa_ratio"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  EXPECT_LT(text.find("3->6"), text.find("3->5"));  // newest first, as the API gives them
}

}  // namespace
}  // namespace aiscale::cli
