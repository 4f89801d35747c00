#include "report/report_json.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::report {
namespace {

using nlohmann::json;

WorkloadSummary Serving(const std::string& name, double gpu_h) {
  WorkloadSummary w;
  w.name = name;
  w.kind = "InferenceService";
  w.gpu_hours = gpu_h;
  w.rescales = 3;
  w.serving = ServingFigures{};
  w.serving->requests = 10;
  w.serving->slo_attainment = 0.9;
  TimelinePoint p;
  p.t_s = 60;
  p.desired = 4;
  p.request_rate = 1.25;
  w.timeline = {p};
  return w;
}

TEST(ReportJson, FiguresNotMeasuredAreNullOrAbsentNeverZero) {
  const json j = ToJson(Serving("svc", 2));
  EXPECT_TRUE(j["completion_time_s"].is_null());  // a service has no completion time
  EXPECT_TRUE(j["mean_gpu_util"].is_null());
  EXPECT_TRUE(j["latency_p99_s"].is_null());  // nothing completed
  EXPECT_EQ(j["scale_events"], 3);
  EXPECT_EQ(j["requests"], 10);
  EXPECT_FALSE(j.contains("oracle_gpu_hours"));
  EXPECT_FALSE(j.contains("phase_time_s"));  // training only
}

TEST(ReportJson, TimelinePointsHoldTheirFiniteFields) {
  TimelinePoint p;
  p.t_s = 30;
  p.desired = 4;
  p.latency_p99_s = 0.25;
  const json j = ToJson(p);
  EXPECT_EQ(j, json({{"t_s", 30}, {"desired", 4}, {"latency_p99_s", 0.25}}));
  EXPECT_TRUE(j["desired"].is_number_integer());
}

TEST(ReportJson, ARunWithSeveralWorkloadsHasTotalsAndNamedPoints) {
  RunSummary r;
  r.label = "hpa-queue";
  r.policy = "hpa";
  r.workloads = {Serving("a", 2), Serving("b", 3)};
  r.workloads[1].verdict =
      Verdict{{{"gpu_hours_over_oracle", 1.2, 1.15, false, {}, {}}}, false, "over", ""};
  const json j = ToJson(r);
  EXPECT_EQ(j["policy"], "hpa-queue");
  EXPECT_EQ(j["policy_name"], "hpa");
  EXPECT_FALSE(j.contains("baseline"));  // a policy under test
  EXPECT_FALSE(j.contains("role"));
  EXPECT_DOUBLE_EQ(j["gpu_hours"].get<double>(), 5);
  EXPECT_EQ(j["rescales"], 6);
  ASSERT_EQ(j["timeline"].size(), 2u);
  EXPECT_EQ(j["timeline"][1]["workload"], "b");
  EXPECT_FALSE(j.contains("vs_targets"));  // per workload with several
  EXPECT_EQ(j["workloads"][1]["vs_targets"]["why_not"], "over");
  EXPECT_FALSE(j["workloads"][1]["vs_targets"]["targets"][0].contains("required"));
}

TEST(ReportJson, TheDocumentNamesTheScenario) {
  Report r;
  r.scenario = "s";
  r.file = "s.yaml";
  r.seed = 7;
  r.duration_limit_s = 3600;
  RunSummary run;
  run.label = "static";
  run.baseline = Baseline::kStatic;
  run.workloads = {Serving("a", 1)};
  r.runs = {run};
  const json j = ToJson(r);
  EXPECT_EQ(j["scenario"], "s");
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["runs"][0]["baseline"], "static");
  EXPECT_EQ(j["runs"][0]["decisions"]["changes"], json::array());
}

}  // namespace
}  // namespace aiscale::report
