#include "report/run_summary.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::report {
namespace {

WorkloadSummary Workload(const std::string& name, double gpu_h, double util, double done_s) {
  WorkloadSummary w;
  w.name = name;
  w.gpu_hours = gpu_h;
  w.cost_usd = 2 * gpu_h;
  w.mean_gpu_util = util;
  w.completion_time_s = done_s;
  w.rescales = 1;
  w.max_failure_replacement_s = done_s / 10;
  return w;
}

TEST(RunSummary, TotalsSumTakeTheMaximumAndWeighUtilizationByGpuHours) {
  struct Case {
    std::string name;
    std::vector<WorkloadSummary> workloads;
    double gpu_h, util, done_s;
    int rescales;
  };
  const std::vector<Case> cases = {
      {"one workload: its own figures", {Workload("a", 10, 0.5, 3600)}, 10, 0.5, 3600, 1},
      {"two", {Workload("a", 10, 0.5, 3600), Workload("b", 30, 0.9, 7200)}, 40, 0.8, 7200, 2},
      // A service has no utilization or completion: it weighs nothing, and is not a 0.
      {"with a service",
       {Workload("a", 10, 0.5, 3600), Workload("svc", 30, kNoValue, kNoValue)},
       40,
       0.5,
       3600,
       2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RunSummary r;
    r.workloads = c.workloads;
    const WorkloadSummary t = r.Totals();
    EXPECT_DOUBLE_EQ(t.gpu_hours, c.gpu_h);
    EXPECT_DOUBLE_EQ(t.cost_usd, 2 * c.gpu_h);
    EXPECT_DOUBLE_EQ(t.mean_gpu_util, c.util);
    EXPECT_DOUBLE_EQ(t.completion_time_s, c.done_s);
    EXPECT_EQ(t.rescales, c.rescales);
    EXPECT_TRUE(t.timeline.empty());
  }
  RunSummary none;
  EXPECT_TRUE(std::isnan(none.Totals().completion_time_s));
  EXPECT_TRUE(std::isnan(none.RescalesPerHour()));
}

TEST(RunSummary, DigestCountsEveryDecisionAndShowsTheOnesThatDidSomething) {
  std::vector<Decision> ds(kDecisionsShown + 20);
  for (size_t i = 0; i < ds.size(); ++i) {
    ds[i].recommendation.rule = i % 2 ? "hold" : "";
    ds[i].action = i < 10 ? Action::kNone : Action::kScaled;
  }
  ds[3].vetoed = true;
  const DecisionDigest d = DigestDecisions(ds, 10000);
  EXPECT_EQ(d.total, 10000u);
  EXPECT_EQ(d.kept, ds.size());
  EXPECT_EQ(d.by_rule.at("(none)") + d.by_rule.at("hold"), static_cast<int>(ds.size()));
  EXPECT_EQ(d.by_action.at("none"), 10);
  ASSERT_EQ(d.shown.size(), kDecisionsShown);
  EXPECT_TRUE(d.shown[0].vetoed);  // the veto, then the scalings
  EXPECT_EQ(d.not_shown, ds.size() - 10 + 1 - kDecisionsShown);
}

TEST(RunSummary, BaselinesAreFoundByRole) {
  Report r;
  r.runs.resize(3);
  r.runs[0].label = "static";  // a label is not a role
  r.runs[1].label = "peak";
  r.runs[1].baseline = Baseline::kStaticPeak;
  r.runs[2].label = "fixed";
  r.runs[2].baseline = Baseline::kStatic;
  EXPECT_EQ(r.FindBaseline(Baseline::kStatic), &r.runs[2]);
  EXPECT_EQ(r.FindBaseline(Baseline::kStaticPeak), &r.runs[1]);
  r.runs[0].workloads = {Workload("b", 1, 1, 1), Workload("a", 1, 1, 1)};
  r.runs[1].workloads = {Workload("a", 1, 1, 1), Workload("c", 1, 1, 1)};
  EXPECT_EQ(r.WorkloadNames(), (std::vector<std::string>{"b", "a", "c"}));
}

}  // namespace
}  // namespace aiscale::report
