// The GpuDemand workload kind on a small hand-made curve: the demand signal a policy follows,
// GPUs ready after restart_s, pending and held GPU-minutes computed by hand, a reclaim costing
// restart_s per preempted GPU, the guarantee waits, and bad `demand` bodies.
#include "sim/demand/gpu_demand.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/config_node.h"

namespace aiscale::sim::demand {
namespace {

// Demand 4 GPUs for a minute, 8 for a minute, 2 for a minute; restart 30 s.
std::shared_ptr<const GpuDemandSpec> Spec() {
  auto spec = std::make_shared<GpuDemandSpec>();
  auto s = std::make_shared<traces::DemandSeries>();
  s->points = {{0, 4}, {60, 8}, {120, 2}};
  s->end_s = 180;
  spec->series = s;
  spec->restart_s = 30;
  spec->source = "points";
  return spec;
}

struct Harness {
  explicit Harness(int64_t guaranteed = -1, int initial = 0) {
    WorkloadEnv env;
    env.name = "vc";
    env.initial_replicas = initial;
    env.scrape_interval_s = 15;
    env.guaranteed_gpus = guaranteed;
    w = std::make_unique<GpuDemand>(Spec(), env);
    w->Start(q);
  }
  void At(double t) { q.RunUntil(AtSeconds(t)); }
  double Demand() {
    auto o = w->Signal(kGpuDemandSignal, q.Now());
    return o.empty() ? -1 : o[0].value;
  }
  EventQueue q;
  std::unique_ptr<GpuDemand> w;
};

TEST(GpuDemand, ExportsTheCurveAtTheLastScrape) {
  Harness h;
  struct Case {
    double t;
    double want;
  };
  // The scrape at 60 s sees 8; at 59 s the last scrape (45 s) saw 4; past the end: none.
  for (const Case& c : std::vector<Case>{{0, 4}, {59, 4}, {60, 8}, {74, 8}, {121, 2}, {181, -1}}) {
    h.At(c.t);
    EXPECT_EQ(h.Demand(), c.want) << "at " << c.t;
  }
  EXPECT_TRUE(h.w->Signal("other", h.q.Now()).empty());
}

TEST(GpuDemand, GrownGpusWorkAfterTheRestartAndShrinksAreAtOnce) {
  Harness h;
  h.At(10);
  ASSERT_TRUE(h.w->Apply(4).ok());
  auto s = h.w->Observe();
  EXPECT_EQ(s->current, 4);
  EXPECT_EQ(s->ready, 0);
  h.At(39);
  EXPECT_EQ(h.w->Observe()->ready, 0);
  h.At(40);
  EXPECT_EQ(h.w->Observe()->ready, 4);
  ASSERT_TRUE(h.w->Apply(1).ok());
  EXPECT_EQ(h.w->Observe()->current, 1);
  EXPECT_EQ(h.w->Observe()->ready, 1);
  EXPECT_FALSE(h.w->Apply(-1).ok());
}

TEST(GpuDemand, PendingAndHeldGpuMinutesByHand) {
  Harness h;
  h.At(10);
  ASSERT_TRUE(h.w->Apply(4).ok());  // 0-10 s: 4 pending
  h.At(70);
  ASSERT_TRUE(h.w->Apply(8).ok());  // 60-70 s: 8 wanted, 4 held: 4 pending
  h.At(120);
  ASSERT_TRUE(h.w->Apply(2).ok());  // demand fell to 2: nothing preempted
  h.At(200);
  EXPECT_TRUE(h.w->Done());
  const report::WorkloadSummary s = h.w->Summary();
  const nlohmann::json j = h.w->KindFigures();
  EXPECT_DOUBLE_EQ(j["demand_gpu_minutes"].get<double>(), (4 + 8 + 2) * 60 / 60.0);
  EXPECT_DOUBLE_EQ(j["pending_gpu_minutes"].get<double>(), (4 * 10 + 4 * 10) / 60.0);
  EXPECT_DOUBLE_EQ(j["held_gpu_minutes"].get<double>(), (4 * 60 + 8 * 50 + 2 * 60) / 60.0);
  // Held but restarting: 4 GPUs 10-40 s, 4 more 70-100 s.
  EXPECT_DOUBLE_EQ(j["starting_gpu_minutes"].get<double>(), (4 * 30 + 4 * 30) / 60.0);
  EXPECT_EQ(j["reclaimed_gpus"].get<int64_t>(), 0);
  EXPECT_EQ(s.rescales, 3);
  EXPECT_DOUBLE_EQ(s.gpu_hours, (4 * 60 + 8 * 50 + 2 * 60) / 3600.0);
}

TEST(GpuDemand, AReclaimCostsTheRestartOfEachPreemptedGpu) {
  Harness h(-1, 8);  // starts warm at 8
  h.At(60);
  ASSERT_TRUE(h.w->Apply(5).ok());  // demand 8: 3 busy GPUs taken
  h.At(130);
  ASSERT_TRUE(h.w->Apply(1).ok());  // demand 2: 1 busy GPU taken (held 5, 3 idle)
  const nlohmann::json j = h.w->KindFigures();
  EXPECT_EQ(j["reclaimed_gpus"].get<int64_t>(), 4);
  EXPECT_DOUBLE_EQ(j["reclaimed_gpu_minutes"].get<double>(), 4 * 30 / 60.0);
}

TEST(GpuDemand, GuaranteeWaitsFromShortfallToGrantAndReady) {
  Harness h(6, 4);  // guaranteed 6, starts at 4
  h.At(70);         // demand 8 from 60 s: owed 6, held 4
  ASSERT_TRUE(h.w->Apply(8).ok());
  h.At(200);
  const nlohmann::json w = h.w->KindFigures()["guarantee_waits"];
  EXPECT_EQ(w["episodes"].get<int>(), 1);
  EXPECT_EQ(w["unfinished"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(w["all"]["to_grant_s"]["max"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(w["all"]["to_ready_s"]["max"].get<double>(), 10 + 30);
  EXPECT_FALSE(Harness().w->KindFigures().contains("guarantee_waits"));
}

TEST(GpuDemand, BadBodiesAreErrorsAtTheirField) {
  struct Case {
    std::string yaml;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"{restart_s: 10}", "trace"},
      {"{trace: {format: points, points: [[0, 1]]}}", "points"},
      {"{trace: {format: points, points: [[0, 1.5], [60, 0]]}}", "points"},
      {"{trace: {format: points, points: [[0, 1], [0, 2], [60, 0]]}}", "points"},
      {"{trace: {format: points, points: [[0, 1], [60, 0]]}, restart_s: -1}", "restart_s"},
      {"{trace: {format: helios_vc}}", "path"},
      {"{trace: {format: helios_vc, path: /nonexistent/x.csv}}", "path"},
      {"{trace: {format: points, points: [[0, 1], [60, 0]]}, typo: 1}", "typo"},
      {"{trace: {format: points, points: [[0, 1], [60, 0]], start_s: 60}}", "start_s"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    config::ConfigErrors errors;
    const config::ConfigNode body(YAML::Load(c.yaml), "demand",
                                  std::make_shared<const std::string>("s.yaml"), &errors);
    EXPECT_EQ(GpuDemandSpec::Parse(body), nullptr);
    ASSERT_FALSE(errors.empty());
    EXPECT_NE(errors.ToStatus().message().find(c.field), std::string::npos)
        << errors.ToStatus().message();
  }
}

}  // namespace
}  // namespace aiscale::sim::demand
