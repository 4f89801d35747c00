#include "sim/training_verdict.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::sim {
namespace {

nlohmann::json Static() {
  return {{"policy", "static"}, {"gpu_hours", 100.0}, {"completion_time_s", 36000.0}};
}

// A training run with its oracle's figures (oracle: 80 GPU-h, 0.85 util, 1.05x static time).
nlohmann::json TrainingRun(double gpu_h, double time_s, double util, double oracle_h = 80) {
  return {{"policy", "training"},
          {"gpu_hours", gpu_h},
          {"completion_time_s", time_s},
          {"mean_gpu_util", util},
          {"rescales_per_hour", 0.5},
          {"max_failure_replacement_s", 300.0},
          {"oracle_gpu_hours", oracle_h},
          {"oracle_static_gpu_hours", 100.0},
          {"oracle_mean_gpu_util", 0.85},
          {"oracle_completion_time_s", 37800.0},
          {"oracle_static_completion_time_s", 36000.0},
          {"oracle_feasible", true}};
}

const nlohmann::json* Target(const nlohmann::json& v, const std::string& name) {
  for (const auto& t : v["targets"]) {
    if (t["name"] == name) return &t;
  }
  return nullptr;
}

TEST(TrainingVerdict, SeedFiguresAreRequiredOnlyWhereTheOracleReachesThem) {
  struct Case {
    std::string name;
    std::string scenario;
    nlohmann::json run;
    bool met_all;
    std::string why;  // substring of why_not; empty: none
  };
  const std::vector<Case> cases = {
      {"at the oracle, util 0.82", "story", TrainingRun(82, 37000, 0.82), true, ""},
      {"1.08x the oracle: fine elsewhere", "gpt", TrainingRun(86.4, 37000, 0.82), true, ""},
      {"1.08x the oracle: not on the demo", "demo-bert-large", TrainingRun(86.4, 37000, 0.82),
       false, "x the oracle"},
      {"util below 0.80, which the oracle reaches", "story", TrainingRun(82, 37000, 0.75), false,
       "mean GPU util"},
      {"too slow", "story", TrainingRun(82, 40000, 0.82), false, "completion"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const nlohmann::json v = TrainingVerdict(c.run, {c.run, Static()}, c.scenario);
    ASSERT_FALSE(v.is_null());
    EXPECT_EQ(v["met_all"], c.met_all) << v.dump();
    if (!c.why.empty()) {
      EXPECT_NE(v.value("why_not", "").find(c.why), std::string::npos) << v.dump();
    }
  }
  // GPU-hours -30% is required (the oracle reaches 0.80x static: no, so not required here).
  const nlohmann::json v = TrainingVerdict(TrainingRun(82, 37000, 0.82), {Static()}, "story");
  const nlohmann::json* seed = Target(v, "seed_gpu_hours_vs_static");
  ASSERT_NE(seed, nullptr);
  EXPECT_FALSE((*seed)["required"].get<bool>());
  EXPECT_DOUBLE_EQ((*seed)["oracle"].get<double>(), 0.8);
  EXPECT_TRUE((*Target(v, "seed_mean_gpu_util"))["required"].get<bool>());
}

TEST(TrainingVerdict, OnlyTrainingRunsWithAnOracle) {
  EXPECT_TRUE(TrainingVerdict(Static(), {Static()}, "x").is_null());
  nlohmann::json inference = TrainingRun(1, 1, 1);
  inference["slo_attainment"] = 0.99;
  EXPECT_TRUE(TrainingVerdict(inference, {inference}, "x").is_null());
  EXPECT_DOUBLE_EQ(TrainingOracleTolerance("demo-bert-large"), 1.05);
  EXPECT_DOUBLE_EQ(TrainingOracleTolerance("training-gpt-1b"), 1.10);
}

}  // namespace
}  // namespace aiscale::sim
