#include "report/serving_verdict.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::report {
namespace {

// A serving workload with just what the verdict reads; the timeline has one miss interval
// while a replica was starting (ready < desired) and `sized_misses` with all ready.
WorkloadSummary Service(double gpu_h, double attainment, double cold_misses = 0,
                        double sized_misses = 0) {
  WorkloadSummary w;
  w.name = "svc";
  w.kind = "InferenceService";
  w.gpu_hours = gpu_h;
  w.serving = ServingFigures{};
  w.serving->slo_attainment = attainment;
  w.serving->requests = 10000;
  w.serving->slo.attainment = 0.99;
  w.oracle = OracleFigures{};
  w.oracle->gpu_hours = 10;
  w.oracle->attainment = 0.99;
  auto point = [](double t, double ready, double desired, double missed) {
    TimelinePoint p;
    p.t_s = t;
    p.ready = ready;
    p.desired = desired;
    p.missed = missed;
    return p;
  };
  w.timeline = {point(0, 4, 4, 0), point(30, 4, 6, cold_misses), point(60, 6, 6, cold_misses),
                point(90, 6, 6, cold_misses + sized_misses)};
  return w;
}

Targets IssueThreeTargets() {
  Targets t;
  t.gpu_hours_over_oracle = 1.15;
  t.slo_from_service = true;
  t.no_worse_than = {"hpa", "kpa"};
  t.fewer_gpu_hours_than_static_peak = 0.30;
  return t;
}

bool Met(const Verdict& v, const std::string& name) {
  for (const auto& t : v.targets) {
    if (t.name == name) return t.met;
  }
  ADD_FAILURE() << "no target " << name;
  return false;
}

TEST(ServingVerdict, EachTargetIsJudgedAndMissesAreExplained) {
  struct Case {
    std::string name;
    double gpu_h, attainment;
    bool oracle_met, slo_met, vs_hpa_gpu, vs_static_peak, all;
    std::vector<std::string> why_has;
  };
  // hpa: 20 GPU-hours at 0.95; static-peak: 36 GPU-hours.
  const std::vector<Case> cases = {
      {"meets everything", 11, 0.995, true, true, true, true, true, {}},
      {"too many GPU-hours", 19, 0.995, false, true, true, true, false, {"1.90x the oracle"}},
      {"misses the SLO",
       11,
       0.97,
       true,
       false,
       true,
       true,
       false,
       {"short by 200 requests", "75% of its misses"}},
      {"costlier than hpa and static-peak",
       45,
       0.995,
       false,
       true,
       false,
       false,
       false,
       {"2.25x hpa", "25% more GPU-hours than static-peak"}},
  };
  const WorkloadSummary hpa = Service(20, 0.95), peak = Service(36, 1);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const WorkloadSummary w = Service(c.gpu_h, c.attainment, 30, 10);
    const std::vector<PeerRun> peers = {
        {"predictive", "predictive", Baseline::kNone, &w},
        {"hpa", "hpa", Baseline::kNone, &hpa},
        {"static-peak", "static-peak", Baseline::kStaticPeak, &peak}};
    const std::optional<Verdict> v = JudgeServing(w, "predictive", peers, IssueThreeTargets());
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(Met(*v, "gpu_hours_over_oracle"), c.oracle_met);
    EXPECT_EQ(Met(*v, "slo_attainment"), c.slo_met);
    EXPECT_EQ(Met(*v, "gpu_hours_vs_hpa"), c.vs_hpa_gpu);
    EXPECT_TRUE(Met(*v, "slo_vs_hpa"));
    EXPECT_EQ(Met(*v, "fewer_gpu_hours_than_static_peak"), c.vs_static_peak);
    EXPECT_EQ(v->met_all, c.all);
    EXPECT_EQ(v->why_not.empty(), c.all);
    for (const auto& text : c.why_has) {
      EXPECT_NE(v->why_not.find(text), std::string::npos) << v->why_not;
    }
  }
}

TEST(ServingVerdict, OnlyTheTargetsTheScenarioSetsAreJudged) {
  const WorkloadSummary w = Service(19, 0.97), hpa = Service(20, 0.95);
  const std::vector<PeerRun> peers = {{"hpa-queue", "hpa", Baseline::kNone, &hpa}};
  struct Case {
    std::string name;
    Targets targets;
    std::vector<std::string> judged;
  };
  Targets oracle_only;
  oracle_only.gpu_hours_over_oracle = 2.0;
  Targets fixed_slo;
  fixed_slo.slo_attainment = 0.95;
  Targets vs_hpa;
  vs_hpa.no_worse_than = {"hpa"};  // by policy name: the run labelled hpa-queue counts
  const std::vector<Case> cases = {
      {"a bar of 2x the oracle", oracle_only, {"gpu_hours_over_oracle"}},
      {"a fixed attainment", fixed_slo, {"slo_attainment"}},
      {"every hpa run", vs_hpa, {"gpu_hours_vs_hpa-queue", "slo_vs_hpa-queue"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto v = JudgeServing(w, "predictive", peers, c.targets);
    ASSERT_TRUE(v.has_value());
    std::vector<std::string> names;
    for (const auto& t : v->targets) names.push_back(t.name);
    EXPECT_EQ(names, c.judged);
  }
  EXPECT_TRUE(JudgeServing(w, "predictive", peers, oracle_only)->met_all);
  EXPECT_TRUE(JudgeServing(w, "predictive", peers, fixed_slo)->met_all);
  // No targets at all: no verdict.
  EXPECT_FALSE(JudgeServing(w, "predictive", peers, Targets{}).has_value());
}

TEST(ServingVerdict, MissesAreAttributedToColdStartFromTheTimeline) {
  EXPECT_DOUBLE_EQ(MissesDuringColdStart(Service(1, 1, 30, 10).timeline), 0.75);
  EXPECT_DOUBLE_EQ(MissesDuringColdStart(Service(1, 1, 0, 10).timeline), 0.0);
  EXPECT_DOUBLE_EQ(MissesDuringColdStart(Service(1, 1, 0, 0).timeline), 0.0);
  EXPECT_DOUBLE_EQ(MissesDuringColdStart({}), 0.0);
}

TEST(ServingVerdict, TrainingWorkloadsAndRunsWithoutAnOracleGetNone) {
  WorkloadSummary training;
  training.gpu_hours = 5;
  training.training = TrainingFigures{};
  training.oracle = OracleFigures{};
  EXPECT_FALSE(JudgeServing(training, "t", {}, IssueThreeTargets()).has_value());
  WorkloadSummary no_oracle = Service(5, 1);
  no_oracle.oracle.reset();
  EXPECT_FALSE(JudgeServing(no_oracle, "p", {}, IssueThreeTargets()).has_value());
}

}  // namespace
}  // namespace aiscale::report
