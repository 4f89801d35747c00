#include "decide/training/phase_detector.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

using signals::Phase;

TEST(PhaseDetector, Classify) {
  const PhaseDetector d;  // load below 50 util, idle below 10, band 5
  struct Case {
    std::string name;
    PhaseReading r;
    std::optional<Phase> current;
    std::optional<Phase> want;
  };
  const std::vector<Case> cases = {
      {"reported wins", {Phase::kEval, 95.0, 500.0}, Phase::kCompute, Phase::kEval},
      {"low util, samples: load", {std::nullopt, 30.0, 50.0}, std::nullopt, Phase::kLoad},
      {"low util, no samples: load", {std::nullopt, 25.0, 0.0}, std::nullopt, Phase::kLoad},
      {"high util, samples: compute", {std::nullopt, 85.0, 900.0}, std::nullopt, Phase::kCompute},
      {"mid util, no samples: eval", {std::nullopt, 60.0, 0.0}, std::nullopt, Phase::kEval},
      {"idle and no samples: restart", {std::nullopt, 2.0, 0.0}, Phase::kCompute, std::nullopt},
      {"band keeps compute at 47", {std::nullopt, 47.0, 900.0}, Phase::kCompute, Phase::kCompute},
      {"leaves compute at 44", {std::nullopt, 44.0, 900.0}, Phase::kCompute, Phase::kLoad},
      {"band keeps load at 53", {std::nullopt, 53.0, 10.0}, Phase::kLoad, Phase::kLoad},
      {"leaves load at 56", {std::nullopt, 56.0, 10.0}, Phase::kLoad, Phase::kCompute},
      {"no util keeps a training phase",
       {std::nullopt, std::nullopt, 900.0},
       Phase::kCompute,
       Phase::kCompute},
      {"no util, nothing known", {std::nullopt, std::nullopt, 900.0}, std::nullopt, std::nullopt},
      {"no signals", {std::nullopt, std::nullopt, std::nullopt}, Phase::kLoad, std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(d.Classify(c.r, c.current), c.want);
  }
}

TEST(PhaseDetector, DwellAndLengths) {
  PhaseDetectorConfig cfg;
  cfg.dwell_s = 30;
  const PhaseDetector d(cfg);
  PersistentState st;
  const PhaseReading compute{std::nullopt, 90.0, 1000.0};
  const PhaseReading load{std::nullopt, 25.0, 0.0};
  auto at = [&](const PhaseReading& r, double t) { return d.Update(r, t, st, "pd"); };

  EXPECT_EQ(at(compute, 0).phase, Phase::kCompute);  // first reading adopted at once
  EXPECT_EQ(at(compute, 600).elapsed_s, 600);
  EXPECT_EQ(*at(compute, 600).expected_remaining_s, 600);  // never seen to end: as long again
  // A 15 s blip of load does not switch; 30 s does, dated from its start.
  EXPECT_EQ(at(load, 615).phase, Phase::kCompute);
  EXPECT_EQ(at(compute, 630).phase, Phase::kCompute);
  EXPECT_EQ(at(load, 1000).phase, Phase::kCompute);
  EXPECT_EQ(at(load, 1015).phase, Phase::kCompute);
  const PhaseEstimate sw = at(load, 1030);
  EXPECT_EQ(sw.phase, Phase::kLoad);
  EXPECT_TRUE(sw.changed);
  EXPECT_EQ(sw.ended, Phase::kCompute);
  EXPECT_EQ(sw.ended_length_s, 1000);
  EXPECT_EQ(sw.elapsed_s, 30);
  // Back to compute: its typical length is now known, so the remaining is typical - elapsed.
  at(compute, 1200);
  const PhaseEstimate back = at(compute, 1230);
  ASSERT_EQ(back.phase, Phase::kCompute);
  EXPECT_EQ(*back.typical_length_s, 1000);
  EXPECT_EQ(*at(compute, 1500).expected_remaining_s, 1000 - 300);
  // One length alone: deviation half of it, so the cautious remaining is half the typical.
  EXPECT_EQ(*at(compute, 1500).length_sd_s, 500);
  EXPECT_EQ(*at(compute, 1500).cautious_remaining_s, 1000 - 500 - 300);
  // Reported phases switch at once, with no dwell.
  EXPECT_EQ(at(PhaseReading{Phase::kEval, 90.0, 1000.0}, 1515).phase, Phase::kEval);
}

// The first load teaches the next ones; each further length moves the mean and narrows or
// widens the deviation (EWMA with weight 0.5).
TEST(PhaseDetector, LearnedLengthsCarryTheirDeviation) {
  const PhaseDetector d;
  PersistentState st;
  auto at = [&](Phase p, double t) { return d.Update(PhaseReading{p, 50.0, 0.0}, t, st, "pd"); };
  struct Step {
    std::string name;
    double load_s;  // length of the load phase that ends
    double mean, sd;
  };
  // mean' = mean + 0.5 dev; var' = 0.5 (var + 0.5 dev^2)
  const std::vector<Step> steps = {
      {"first load: sd = half", 4000, 4000, 2000},
      {"shorter reload", 2000, 3000, std::sqrt(0.5 * (2000.0 * 2000 + 0.5 * 2000 * 2000))},
      {"same again", 3000, 3000, std::sqrt(0.25 * (2000.0 * 2000 + 0.5 * 2000 * 2000))},
  };
  double t = 0;
  for (const Step& s : steps) {
    SCOPED_TRACE(s.name);
    at(Phase::kLoad, t);
    t += s.load_s;
    at(Phase::kCompute, t);
    t += 1000;
    const PhaseEstimate e = at(Phase::kLoad, t);
    ASSERT_TRUE(e.typical_length_s && e.length_sd_s && e.cautious_remaining_s);
    EXPECT_DOUBLE_EQ(*e.typical_length_s, s.mean);
    EXPECT_NEAR(*e.length_sd_s, s.sd, 1e-6);
    EXPECT_NEAR(*e.cautious_remaining_s, std::max(0.0, s.mean - s.sd), 1e-6);
  }
}

}  // namespace
}  // namespace aiscale::decide
