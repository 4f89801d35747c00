// `simulate --sweep`'s plan: the real example scenario's compare list expanded over each
// policy's knob, parsed as the scenario parser parses any file, and a run's figures read back.
#include "sim/sweep.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace aiscale::sim {
namespace {

const std::string kConv = std::string(AISCALE_SOURCE_DIR) + "/examples/inference-azure-conv.yaml";

Result<SweepPlan> Plan(const std::string& text, config::ConfigErrors& errs) {
  return PlanSweep(config::ParseConfig(text, kConv, errs), kConv);
}

std::string Example() {
  config::ConfigErrors errs;
  const config::ConfigNode root = config::LoadConfigFile(kConv, errs);
  EXPECT_TRUE(errs.empty());
  return YAML::Dump(root.raw());
}

TEST(Sweep, EachComparedPolicyBecomesAGridOverItsKnob) {
  config::ConfigErrors errs;
  auto plan = Plan(Example(), errs);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto all = plan->scenario.PlanRuns({});
  ASSERT_TRUE(all.ok()) << all.status().message();
  std::vector<std::string> labels;
  for (const auto& run : *all) labels.push_back(run.label);
  size_t points = 0;
  for (const report::SweepFamily& f : plan->layout.families) {
    for (const report::SweepPoint& p : f.points) {
      EXPECT_NE(std::find(labels.begin(), labels.end(), p.label), labels.end()) << p.label;
      ++points;
    }
  }
  EXPECT_EQ(points, labels.size());
  ASSERT_EQ(plan->layout.families.size(), 6u);  // slo, predictive, hpa, hpa-queue, kpa, static-peak
  EXPECT_EQ(plan->layout.families[0].knob, "headroom.prior");
  const report::SweepFamily& predictive = plan->layout.families[1];
  EXPECT_EQ(predictive.policy, "predictive");
  EXPECT_EQ(predictive.knob, "target_utilization");
  ASSERT_EQ(predictive.points.size(), 6u);
  EXPECT_EQ(predictive.points[0].label, "predictive target_utilization=0.4");
  // The knob reached the policy: the run's node carries the value, the rest of the workload's
  // own policy (its capacity) came along.
  auto runs = plan->scenario.PlanRuns({"predictive target_utilization=0.4"});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  const YAML::Node node = (*runs)[0].policy_nodes[0].raw();
  EXPECT_DOUBLE_EQ(node["target_utilization"].as<double>(), 0.4);
  EXPECT_DOUBLE_EQ(node["capacity_per_replica"].as<double>(), 2.0);
  // hpa's factor scales every metric's target; static-peak stays one point.
  auto hpa = plan->scenario.PlanRuns({"hpa-queue x0.5"});
  ASSERT_TRUE(hpa.ok()) << hpa.status().message();
  const YAML::Node metrics = (*hpa)[0].policy_nodes[0].raw()["metrics"];
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_DOUBLE_EQ(metrics[0]["target"]["value"].as<double>(), 12);  // 24 in the file
  EXPECT_DOUBLE_EQ(metrics[1]["target"]["value"].as<double>(), 2);   // 4
  const report::SweepFamily& last = plan->layout.families.back();
  EXPECT_EQ(last.label, "static-peak");
  EXPECT_TRUE(last.knob.empty());
  EXPECT_EQ(last.points.size(), 1u);
}

TEST(Sweep, RefusesWhatItCannotSweepWithTheReason) {
  std::string text = Example();
  // A second workload: which one's frontier would it be?
  config::ConfigErrors errs;
  YAML::Node doc = YAML::Load(text);
  doc["spec"]["workloads"].push_back(YAML::Clone(doc["spec"]["workloads"][0]));
  doc["spec"]["workloads"][1]["name"] = "second";
  auto plan = Plan(YAML::Dump(doc), errs);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("one workload (this one has 2)"), std::string::npos)
      << plan.status().message();

  // A kpa entry without a target cannot be scaled: it runs once and the notes say why.
  doc = YAML::Load(text);
  doc["spec"]["compare"] = YAML::Load("[{name: kpa}]");
  auto kpa = Plan(YAML::Dump(doc), errs);
  ASSERT_TRUE(kpa.ok()) << kpa.status().message();
  ASSERT_EQ(kpa->layout.families.size(), 1u);
  EXPECT_EQ(kpa->layout.families[0].points.size(), 1u);
  ASSERT_EQ(kpa->layout.notes.size(), 1u);
  EXPECT_NE(kpa->layout.notes[0].find("kpa: not swept"), std::string::npos);
}

TEST(Sweep, CollectReadsEachPointsRunAndJudges) {
  report::Sweep layout;
  layout.families = {
      {"slo", "slo", "headroom.prior", {{"slo a", 0, 0, 0, false}}},
      {"hpa", "hpa", "target", {{"hpa a", 1, 0, 0, false}, {"hpa b", 2, 0, 0, false}}}};
  ScenarioResult r;
  auto run = [&r](const std::string& label, double gpu_hours, double attainment) {
    RunResult x;
    x.policy = label;
    WorkloadRun w;
    w.summary.gpu_hours = gpu_hours;
    w.summary.serving.emplace();
    w.summary.serving->slo_attainment = attainment;
    w.summary.serving->slo.attainment = 0.99;
    x.workloads.push_back(w);
    r.runs.push_back(x);
  };
  run("slo a", 10, 0.995);
  run("hpa a", 12, 0.99);  // "hpa b" did not run: no figures, on no frontier
  const report::Sweep s = CollectSweep(layout, r);
  EXPECT_DOUBLE_EQ(s.target, 0.99);  // the service's own target, from its run
  EXPECT_DOUBLE_EQ(s.families[0].points[0].gpu_hours, 10);
  EXPECT_TRUE(s.families[0].points[0].frontier);
  EXPECT_TRUE(std::isnan(s.families[1].points[1].slo_attainment));
  EXPECT_FALSE(s.families[1].points[1].frontier);
  ASSERT_EQ(s.dominance.size(), 2u);
  EXPECT_TRUE(s.dominance[0].dominates);   // slo over hpa
  EXPECT_FALSE(s.dominance[1].dominates);  // hpa over slo
}

}  // namespace
}  // namespace aiscale::sim
