#include "sim/runner.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/report.h"

namespace aiscale::sim {
namespace {

const std::string kGoldenDir = std::string(AISCALE_SOURCE_DIR) + "/tests/golden/";

Scenario Load(const std::string& file) {
  auto s = LoadScenario(kGoldenDir + file);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

// A static scenario with no failure: GPU-hours must be nodes x GPUs x hours.
std::string StaticNoFailure(int nodes) {
  std::ostringstream os;
  os << "apiVersion: aiscale.dev/v1alpha1\nkind: Scenario\nspec:\n  name: s\n  seed: 3\n"
        "  duration: 24h\n  control_period: 15s\n"
        "  cluster: {nodes: 8, gpus_per_node: 4, provisioning_delay: 1m}\n"
        "  workloads:\n    - name: j\n      kind: TrainingJob\n      max_replicas: 8\n"
        "      initial_replicas: "
     << nodes
     << "\n      policy: {name: static}\n      job:\n        total_steps: 20000\n"
        "        epochs: 4\n        load: {initial_gb: 100, storage_gb_per_s: 0.5}\n"
        "        eval: {every_epochs: 2, samples: 100000}\n  compare: [static]\n";
  return os.str();
}

TEST(Runner, StaticGpuHoursAreNodesTimesGpusTimesHours) {
  for (int nodes : {1, 3, 8}) {
    SCOPED_TRACE(nodes);
    auto s = ParseScenario(StaticNoFailure(nodes), "static.yaml");
    ASSERT_TRUE(s.ok()) << s.status().message();
    auto r = RunScenario(*s, {});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->runs[0].cut);
    const report::WorkloadSummary& e = r->runs[0].workloads[0].summary;
    const double hours = e.completion_time_s / 3600;
    EXPECT_GT(hours, 0.1);
    EXPECT_NEAR(e.gpu_hours, nodes * 4 * hours, 1e-6);
    EXPECT_EQ(e.rescales, 0);
    EXPECT_GT(e.mean_gpu_util, 0.2);
    EXPECT_LT(e.mean_gpu_util, 1.0);
  }
}

TEST(Runner, AutoInitialReplicasIsForInferenceServicesOnly) {
  // A training job has no "first interval" to size a warm start from: the file is refused
  // at the field, so `validate` says so before any run.
  std::string text = StaticNoFailure(2);
  const std::string from = "initial_replicas: 2";
  text.replace(text.find(from), from.size(), "initial_replicas: auto");
  auto s = ParseScenario(text, "auto.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("spec.workloads[0].initial_replicas: auto sizes an "
                                      "InferenceService"),
            std::string::npos)
      << s.status().message();
  EXPECT_EQ(s.status().message().rfind("auto.yaml:13:25:", 0), 0u) << s.status().message();
}

TEST(Runner, SameSeedSameReportDifferentSeedDifferentReadings) {
  Scenario s = Load("sim-small-training.yaml");
  RunOptions opt;
  opt.policies = {"training"};  // reads signals, so noise reaches its decisions
  auto a = RunScenario(s, opt);
  auto b = RunScenario(s, opt);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ReportJson(*a).dump(), ReportJson(*b).dump());
  EXPECT_EQ(DecisionLogJsonl(a->runs[0]), DecisionLogJsonl(b->runs[0]));
  s.seed = 8;
  auto c = RunScenario(s, opt);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(DecisionLogJsonl(a->runs[0]), DecisionLogJsonl(c->runs[0]));
}

TEST(Runner, CutAtTheDurationLimitIsReported) {
  Scenario s = Load("sim-small-training.yaml");
  s.duration_s = 1800;
  auto r = RunScenario(s, {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->runs[0].cut);
  ASSERT_TRUE(r->runs[0].workloads[0].summary.training.has_value());
  EXPECT_FALSE(r->runs[0].workloads[0].summary.training->completed);
  EXPECT_DOUBLE_EQ(r->runs[0].end_s, 1800);
}

TEST(Runner, ReplacesTheFailedNodeAndRecordsEveryTick) {
  Scenario s = Load("sim-small-training.yaml");
  auto r = RunScenario(s, {});
  ASSERT_TRUE(r.ok());
  const RunResult& run = r->runs[0];
  const report::WorkloadSummary& e = run.workloads[0].summary;
  ASSERT_TRUE(e.training.has_value());
  ASSERT_EQ(e.training->failures, 1);
  // Static asks for its size back at the next tick: provisioning 2 min + restart 65 s.
  EXPECT_GT(e.max_failure_replacement_s, 120 + 65 - 1);
  EXPECT_LE(e.max_failure_replacement_s, 30 + 120 + 65 + 1);
  EXPECT_EQ(run.decisions_total, run.decisions.size());
  const double ticks = e.completion_time_s / s.control_period_s;
  EXPECT_NEAR(static_cast<double>(run.decisions.size()), ticks, 2);
  EXPECT_EQ(Summarize(run).decisions.by_action["scaled"], 1);
}

TEST(Runner, ComparesPoliciesOnFreshSimulations) {
  Scenario s = Load("sim-small-training.yaml");
  RunOptions opt;
  opt.policies = {"static", "training"};
  int progress_calls = 0;
  opt.on_progress = [&](const RunProgress& p) {
    ++progress_calls;
    EXPECT_GE(p.fraction, 0);
    EXPECT_LE(p.fraction, 1);
  };
  auto r = RunScenario(s, opt);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->runs.size(), 2u);
  EXPECT_EQ(r->runs[0].policy, "static");
  EXPECT_EQ(r->runs[1].policy, "training");
  EXPECT_GE(progress_calls, 2);
  // Same failure time in both runs: failures do not depend on the policy.
  auto first_failure = [](const RunResult& run) {
    for (const auto& e : run.workloads[0].summary.events) {
      if (e.kind == report::RunEvent::Kind::kFailure) return e.t_s;
    }
    return -1.0;
  };
  EXPECT_GT(first_failure(r->runs[0]), 0);
  EXPECT_DOUBLE_EQ(first_failure(r->runs[0]), first_failure(r->runs[1]));
}

// The per-tick decision log of a small static run, diffed exactly against the stored one.
// Regenerate with AISCALE_UPDATE_GOLDEN=1 after an intended change, and review the diff.
TEST(Runner, GoldenDecisionLog) {
  Scenario s = Load("sim-small-training.yaml");
  auto r = RunScenario(s, {});
  ASSERT_TRUE(r.ok());
  const std::string got = DecisionLogJsonl(r->runs[0]);
  const std::string path = kGoldenDir + "sim-small-training.decisions.jsonl";
  if (std::getenv("AISCALE_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << got;
    GTEST_SKIP() << "regenerated " << path;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f) << "missing " << path << " (run with AISCALE_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << f.rdbuf();
  if (got == want.str()) return;
  std::istringstream a(got), b(want.str());
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(a, la));
    const bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) break;
    if (!ha || !hb || la != lb) {
      FAIL() << "decision log differs from " << path << " at line " << line << "\n got: " << la
             << "\nwant: " << lb;
    }
  }
}

}  // namespace
}  // namespace aiscale::sim
