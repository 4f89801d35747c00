#include "sim/report_html.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::sim {
namespace {

using nlohmann::json;

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// A report.json run entry of kind InferenceService, with a short timeline whose figures
// scale with `k` (so policies differ).
json InferenceRun(const std::string& policy, double k) {
  json tl = json::array();
  for (int i = 0; i < 6; ++i) {
    tl.push_back({{"t_s", 30.0 * i},
                  {"desired", static_cast<int>(2 * k) + i},
                  {"ready", static_cast<int>(2 * k) + i / 2},
                  {"request_rate", 1.5 * i},
                  {"latency_p99_s", i == 0 ? 0.0 : 3.0 * k * i},
                  {"ttft_p99_s", i == 0 ? 0.0 : 0.4 * k * i}});
  }
  return {{"policy", policy},
          {"kind", "InferenceService"},
          {"gpu_hours", 10 * k},
          {"gpu_hours_over_oracle", 10 * k / 4},
          {"oracle_gpu_hours", 4.0},
          {"oracle_attainment", 0.995},
          {"oracle_feasible", true},
          {"static_peak_replicas", 18},
          {"cost_usd", 25 * k},
          {"requests", 1000},
          {"slo_attainment", 1.0 - 0.008 * k},
          {"latency_p50_s", 1.0},
          {"latency_p99_s", 9.5 * k},
          {"ttft_p50_s", 0.3},
          {"ttft_p99_s", 1.7 * k},
          {"timed_out", 3},
          {"dropped", 0},
          {"scale_events", 7},
          {"cold_start_s", 240.0},
          {"slo", {{"ttft_s", 2.0}, {"latency_s", 20.0}, {"attainment", 0.99}}},
          {"timeline", tl}};
}

// A training run entry: nodes, phases, a failure and a rescale; `vs_static` when given.
json TrainingRun(const std::string& policy, const json& vs_static = nullptr) {
  json tl = json::array();
  for (int i = 0; i < 8; ++i) {
    tl.push_back({{"t_s", 600.0 * i},
                  {"desired", 8},
                  {"ready", i == 3 ? 7 : 8},
                  {"phase", i % 3},
                  {"restarting", i == 4 ? 1 : 0},
                  {"samples_per_s", 100.0 * i},
                  {"gpu_util", 50.0}});
  }
  json r = {{"policy", policy},
            {"kind", "TrainingJob"},
            {"gpu_hours", 100.0},
            {"completion_time_s", 4200.0},
            {"mean_gpu_util", 0.5},
            {"rescales", 1},
            {"max_failure_replacement_s", 300.0},
            {"cut", false},
            {"timeline", tl},
            {"workloads",
             {{{"name", "job"},
               {"failure_events", {{{"t_s", 1800.0}}}},
               {"rescale_events", {{{"t_s", 2400.0}, {"from", 8}, {"to", 7}}}}}}}};
  if (!vs_static.is_null()) r["vs_static"] = vs_static;
  return r;
}

// The runs as a vector: a braced list of one json given to a json parameter is a copy of that
// one object with clang and a one-element array with GCC (nlohmann's initializer lists).
json Report(const std::string& scenario, const std::vector<json>& runs) {
  return {{"scenario", scenario},
          {"file", "x.yaml"},
          {"seed", 1},
          {"duration_limit_s", 3600.0},
          {"runs", json(runs)}};
}

TEST(ReportHtml, InferencePageDrawsEveryPolicyOnEveryChart) {
  struct Case {
    const char* name;
    std::vector<std::string> policies;
  };
  const std::vector<Case> cases = {
      {"one policy", {"hpa"}},
      {"the usual comparison", {"predictive", "hpa", "kpa", "static-peak"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<json> runs;
    for (size_t i = 0; i < c.policies.size(); ++i) {
      runs.push_back(InferenceRun(c.policies[i], 1.0 + static_cast<double>(i)));
    }
    const std::string html = ReportHtml(Report("inf", runs));
    // Demand, latency and TTFT: one series per policy; replicas: ready and desired each.
    EXPECT_EQ(Count(html, "class=\"series\""), 5 * c.policies.size());
    for (const auto& p : c.policies) {
      SCOPED_TRACE(p);
      const std::string pol = "data-policy=\"" + p + "\"";
      for (const char* chart : {"demand", "latency", "ttft"}) {
        EXPECT_EQ(Count(html, "data-chart=\"" + std::string(chart) + "\" " + pol), 1u) << chart;
      }
      EXPECT_EQ(Count(html, "data-chart=\"replicas\" " + pol + " data-kind=\"ready\""), 1u);
      EXPECT_EQ(Count(html, "data-chart=\"replicas\" " + pol + " data-kind=\"desired\""), 1u);
      // The legend and the table name the policy.
      EXPECT_EQ(Count(html, "<span " + pol + ">"), 1u);
      EXPECT_EQ(Count(html, "<tr " + pol + ">"), 1u);
    }
    EXPECT_EQ(Count(html, "data-legend=\"policies\""), 1u);
    // The SLO bound on both latency charts, and only there.
    EXPECT_EQ(Count(html, "data-ref=\"slo\""), 2u);
    EXPECT_EQ(Count(html, "data-chart=\"latency\" data-ref=\"slo\""), 1u);
    EXPECT_EQ(Count(html, "data-chart=\"ttft\" data-ref=\"slo\""), 1u);
    EXPECT_NE(html.find(">SLO 20 s<"), std::string::npos);
    EXPECT_NE(html.find(">SLO 2 s<"), std::string::npos);
    EXPECT_EQ(Count(html, "data-policy=\"oracle\""), 1u);
    // No training section for inference-only runs.
    EXPECT_EQ(html.find("data-chart=\"nodes\""), std::string::npos);
  }
}

TEST(ReportHtml, InferenceTableShowsTheFiguresAndTheOracle) {
  const std::string html =
      ReportHtml(Report("inf", {InferenceRun("predictive", 1), InferenceRun("hpa", 2)}));
  struct Case {
    const char* name;
    const char* text;
  };
  const std::vector<Case> cases = {
      {"GPU-hours", "<td>20.0</td>"},
      {"ratio to the oracle", "<td>5.00</td>"},
      {"SLO attainment met", "<td>0.9920</td>"},
      {"SLO attainment missed is marked", "<td class=\"bad\">0.9840</td>"},
      {"p99 latency", "<td>19.00</td>"},
      {"p99 TTFT", "<td>3.40</td>"},
      {"oracle row", "oracle (offline lower bound)</td><td>4.0</td><td>1.00</td>"},
      {"oracle attainment", "<td>0.9950</td>"},
      {"static-peak size", "static-peak size 18 replicas"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_NE(html.find(c.text), std::string::npos) << c.text;
  }
}

TEST(ReportHtml, TrainingPageShowsWhyNotOnlyWhenStaticWasNotBeaten) {
  const std::string why = "GPU-hours 0.995x static (not below 0.99x); 2 rescales";
  struct Case {
    const char* name;
    json vs_static;
    bool shown;  // the why_not text is on the page
  };
  const std::vector<Case> cases = {
      {"did not beat static",
       {{"gpu_hours_ratio", 0.995},
        {"completion_ratio", 1.0},
        {"beats_static", false},
        {"why_not", why}},
       true},
      {"beat static",
       {{"gpu_hours_ratio", 0.7}, {"completion_ratio", 1.05}, {"beats_static", true}},
       false},
      {"beat static, stray why_not",
       {{"gpu_hours_ratio", 0.7},
        {"completion_ratio", 1.05},
        {"beats_static", true},
        {"why_not", why}},
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string html =
        ReportHtml(Report("train", {TrainingRun("training", c.vs_static), TrainingRun("static")}));
    EXPECT_EQ(html.find(why) != std::string::npos, c.shown);
    EXPECT_EQ(html.find("does not beat static") != std::string::npos, c.shown);
    EXPECT_EQ(html.find("<b>training</b> beats static: GPU-hours 0.700x, completion 1.050x") !=
                  std::string::npos,
              !c.shown);
    // One verdict line: static is never judged against itself.
    EXPECT_EQ(Count(html, "data-verdict=\"vs_static\""), 1u);
    // The training charts are still there for both runs.
    for (const char* p : {"training", "static"}) {
      SCOPED_TRACE(p);
      const std::string pol = "data-policy=\"" + std::string(p) + "\"";
      EXPECT_EQ(Count(html, "data-chart=\"nodes\" " + pol), 2u);  // desired and ready
      EXPECT_EQ(Count(html, "data-chart=\"gpu_util\" " + pol), 1u);
      EXPECT_EQ(Count(html, "data-chart=\"samples\" " + pol), 1u);
    }
    EXPECT_EQ(Count(html, "data-event=\"failure\""), 6u);  // 3 charts x 2 runs
    EXPECT_EQ(Count(html, "class=\"marker\""), 6u);
    EXPECT_NE(html.find("<th>training / static</th>"), std::string::npos);
  }
}

TEST(ReportHtml, InferenceVerdictShowsWhyNot) {
  json a = InferenceRun("predictive", 1), b = InferenceRun("hpa", 2);
  a["vs_targets"] = {{"met_all", true}};
  b["vs_targets"] = {{"met_all", false}, {"why_not", "GPU-hours 5.00x the oracle (<= 1.15x)"}};
  const std::string html = ReportHtml(Report("inf", {a, b}));
  EXPECT_NE(html.find("<b>predictive</b> meets every target"), std::string::npos);
  EXPECT_NE(html.find("<b>hpa</b> misses targets: <span class=\"why\">GPU-hours 5.00x the "
                      "oracle (&lt;= 1.15x)</span>"),
            std::string::npos);
}

TEST(ReportHtml, TheOraclesPlanIsDrawnOnceWhenTheRunsCarryIt) {
  struct Case {
    std::string name;
    bool with_plan;
    size_t want;
  };
  for (const auto& c : std::vector<Case>{{"plan", true, 1}, {"no plan", false, 0}}) {
    SCOPED_TRACE(c.name);
    json a = InferenceRun("predictive", 1), b = InferenceRun("hpa", 2);
    if (c.with_plan) {
      for (json* r : {&a, &b}) (*r)["oracle_plan"] = {{"interval_s", 60}, {"replicas", {3, 9, 4}}};
    }
    const std::string html = ReportHtml(Report("inf", {a, b}));
    EXPECT_EQ(Count(html, "data-kind=\"oracle\""), c.want);
    EXPECT_EQ(html.find("the oracle's plan in grey") != std::string::npos, c.with_plan);
  }
}

TEST(ReportHtml, LatencyChartsUsePerIntervalP99sWhenTheTimelineHasThem) {
  for (const bool per_interval : {true, false}) {
    SCOPED_TRACE(per_interval);
    json a = InferenceRun("predictive", 1);
    if (per_interval) {
      for (auto& p : a["timeline"]) {
        p["interval_latency_p99_s"] = 7.0;
        p["interval_ttft_p99_s"] = 0.7;
      }
    }
    const std::string html = ReportHtml(Report("inf", {a}));
    EXPECT_EQ(html.find("completed since the previous report point") != std::string::npos,
              per_interval);
    EXPECT_EQ(html.find("completed in the metrics window") != std::string::npos, !per_interval);
  }
}

TEST(ReportHtml, IsSelfContained) {
  struct Case {
    const char* name;
    json report;
    bool urls_in_names;  // the input itself holds URLs (shown escaped, as text)
  };
  const std::vector<Case> cases = {
      {"inference", Report("inf", {InferenceRun("predictive", 1), InferenceRun("hpa", 2)}), false},
      {"training", Report("train", {TrainingRun("training"), TrainingRun("static")}), false},
      {"mixed", Report("mixed", {InferenceRun("hpa", 1), TrainingRun("static")}), false},
      {"no runs", Report("empty", {}), false},
      // Names from the scenario file are text, never markup.
      {"hostile names",
       Report("<script src=\"https://x/y.js\"></script>", {InferenceRun("<img src=http://x>", 1)}),
       true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string html = ReportHtml(c.report);
    for (const char* banned : {"<script", "<link", "<img", "<iframe", "@import", "url("}) {
      EXPECT_EQ(html.find(banned), std::string::npos) << banned;
    }
    if (!c.urls_in_names) {
      for (const char* banned : {"http://", "https://", " src=", " href="}) {
        EXPECT_EQ(html.find(banned), std::string::npos) << banned;
      }
    } else {
      EXPECT_NE(html.find("&lt;img src=http://x&gt;"), std::string::npos);
    }
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("</html>"), std::string::npos);
  }
}

}  // namespace
}  // namespace aiscale::sim
