#include "sim/inference_verdict.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aiscale::sim {
namespace {

// A run entry with just the fields the verdict reads; the timeline has one miss interval
// while a replica was starting (ready < desired) and `sized_misses` with all ready.
nlohmann::json RunEntryFor(const std::string& policy, double gpu_h, double attainment,
                           double cold_misses = 0, double sized_misses = 0) {
  nlohmann::json tl = nlohmann::json::array();
  tl.push_back({{"t_s", 0}, {"ready", 4}, {"desired", 4}, {"missed", 0}});
  tl.push_back({{"t_s", 30}, {"ready", 4}, {"desired", 6}, {"missed", cold_misses}});
  tl.push_back({{"t_s", 60}, {"ready", 6}, {"desired", 6}, {"missed", cold_misses}});
  tl.push_back({{"t_s", 90}, {"ready", 6}, {"desired", 6}, {"missed", cold_misses + sized_misses}});
  return {{"policy", policy},
          {"gpu_hours", gpu_h},
          {"slo_attainment", attainment},
          {"requests", 10000},
          {"oracle_gpu_hours", 10},
          {"oracle_attainment", 0.99},
          {"oracle_feasible", true},
          {"slo", {{"attainment", 0.99}}},
          {"timeline", tl}};
}

bool Met(const nlohmann::json& v, const std::string& name) {
  for (const auto& t : v["targets"]) {
    if (t["name"] == name) return t["met"].get<bool>();
  }
  ADD_FAILURE() << "no target " << name;
  return false;
}

TEST(InferenceVerdict, EachTargetIsJudgedAndMissesAreExplained) {
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
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<nlohmann::json> runs = {
        RunEntryFor("predictive", c.gpu_h, c.attainment, 30, 10), RunEntryFor("hpa", 20, 0.95),
        RunEntryFor("static-peak", 36, 1)};
    const nlohmann::json v = InferenceVerdict(runs[0], runs);
    ASSERT_FALSE(v.is_null());
    EXPECT_EQ(Met(v, "gpu_hours_over_oracle"), c.oracle_met);
    EXPECT_EQ(Met(v, "slo_attainment"), c.slo_met);
    EXPECT_EQ(Met(v, "gpu_hours_vs_hpa"), c.vs_hpa_gpu);
    EXPECT_TRUE(Met(v, "slo_vs_hpa"));
    EXPECT_EQ(Met(v, "fewer_gpu_hours_than_static_peak"), c.vs_static_peak);
    EXPECT_EQ(v["met_all"].get<bool>(), c.all);
    EXPECT_EQ(v.contains("why_not"), !c.all);
    for (const auto& w : c.why_has) {
      EXPECT_NE(v.value("why_not", "").find(w), std::string::npos) << v.value("why_not", "");
    }
  }
}

TEST(InferenceVerdict, MissesAreAttributedToColdStartFromTheTimeline) {
  EXPECT_DOUBLE_EQ(MissesDuringColdStart(RunEntryFor("p", 1, 1, 30, 10)), 0.75);
  EXPECT_DOUBLE_EQ(MissesDuringColdStart(RunEntryFor("p", 1, 1, 0, 10)), 0.0);
  EXPECT_DOUBLE_EQ(MissesDuringColdStart(RunEntryFor("p", 1, 1, 0, 0)), 0.0);
}

TEST(InferenceVerdict, TrainingRunsGetNone) {
  const nlohmann::json training = {{"policy", "training"}, {"gpu_hours", 5.0}};
  EXPECT_TRUE(InferenceVerdict(training, {training}).is_null());
}

}  // namespace
}  // namespace aiscale::sim
