#include "report/frontier.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace aiscale::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

SweepFamily Family(const std::string& label, std::vector<std::pair<double, double>> pts) {
  SweepFamily f{label, label, "knob", {}};
  for (size_t i = 0; i < pts.size(); ++i) {
    f.points.push_back({label + std::to_string(i), 0, pts[i].first, pts[i].second, false});
  }
  return f;
}

TEST(Frontier, MarksThePointsNoOtherBeats) {
  struct Case {
    const char* name;
    std::vector<std::pair<double, double>> points;  // {GPU-hours, attainment}
    std::vector<bool> frontier;
  };
  const Case cases[] = {
      {"one point", {{10, 0.99}}, {true}},
      {"cheaper and better wins", {{10, 0.99}, {12, 0.98}}, {true, false}},
      {"a trade-off keeps both", {{10, 0.98}, {12, 0.99}}, {true, true}},
      {"an equal point does not hide its twin", {{10, 0.99}, {10, 0.99}}, {true, true}},
      {"same cost, lower attainment loses", {{10, 0.99}, {10, 0.95}}, {true, false}},
      {"no attainment is on no frontier", {{10, kNaN}, {12, 0.9}}, {false, true}},
  };
  for (const Case& c : cases) {
    SweepFamily f = Family("p", c.points);
    MarkFrontier(f);
    for (size_t i = 0; i < c.frontier.size(); ++i) {
      EXPECT_EQ(f.points[i].frontier, c.frontier[i]) << c.name << ", point " << i;
    }
  }
}

TEST(Frontier, DominanceNeedsEveryPointMatched) {
  struct Case {
    const char* name;
    std::vector<std::pair<double, double>> a, b;
    bool dominates;
    size_t unmatched;
  };
  const Case cases[] = {
      {"cheaper at every level", {{8, 0.99}, {5, 0.95}}, {{9, 0.99}, {6, 0.95}}, true, 0},
      {"equal counts as matched", {{9, 0.99}}, {{9, 0.99}}, true, 0},
      {"a cheap low point of b is unmatched", {{8, 0.99}}, {{9, 0.99}, {3, 0.5}}, false, 1},
      {"a level a never reaches", {{8, 0.98}}, {{20, 0.999}}, false, 1},
      {"b's points without attainment need no match", {{8, 0.99}}, {{9, 0.99}, {1, kNaN}}, true, 0},
      {"a's points without attainment match nothing", {{1, kNaN}}, {{9, 0.99}}, false, 1},
  };
  for (const Case& c : cases) {
    const Dominance d = Dominates(Family("a", c.a), Family("b", c.b));
    EXPECT_EQ(d.dominates, c.dominates) << c.name;
    EXPECT_EQ(d.unmatched.size(), c.unmatched) << c.name;
  }
}

TEST(Frontier, CheapestMeetingTheTarget) {
  struct Case {
    const char* name;
    std::vector<std::pair<double, double>> points;
    int best;
  };
  const Case cases[] = {
      {"the cheaper of two that meet", {{20, 0.999}, {12, 0.991}, {8, 0.95}}, 1},
      {"exactly the target meets", {{20, 0.999}, {12, 0.99}}, 1},
      {"none meets", {{20, 0.98}, {12, 0.95}}, -1},
      {"no attainment never meets", {{1, kNaN}, {20, 0.995}}, 1},
  };
  for (const Case& c : cases)
    EXPECT_EQ(CheapestMeeting(Family("p", c.points), 0.99), c.best) << c.name;
}

TEST(Frontier, JudgeSweepComparesPoliciesNotSettingsOfOne) {
  Sweep s;
  s.families = {Family("hpa", {{10, 0.9}}), Family("hpa-queue", {{20, 0.95}}),
                Family("slo", {{5, 0.99}}), Family("static-peak", {{30, 0.999}})};
  s.families[1].policy = "hpa";
  s.families[3].knob.clear();  // one point: a reference, not a swept policy
  JudgeSweep(s);
  ASSERT_EQ(s.dominance.size(), 4u);  // slo <-> hpa, slo <-> hpa-queue
  for (const Dominance& d : s.dominance) {
    EXPECT_TRUE(d.policy == "slo" || d.over == "slo") << d.policy << " over " << d.over;
    EXPECT_EQ(d.dominates, d.policy == "slo") << d.policy << " over " << d.over;
  }
  EXPECT_TRUE(s.families[3].points[0].frontier);
}

}  // namespace
}  // namespace aiscale::report
