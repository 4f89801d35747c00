// LiveBoard's history for the dashboard's sparklines: changes are kept, a run of equal ticks
// only moves its last point, the oldest go past the limit, and the history and the rule's
// start follow a workload across publishes even when the order changes.
#include "control/live_board.h"

#include <gtest/gtest.h>

namespace aiscale::control {
namespace {

TEST(AppendScalePoint, KeepsChangesAndMovesTheLastOfARun) {
  struct Case {
    const char* name;
    std::vector<ScalePoint> in;
    size_t limit;
    std::vector<double> want_times;
  };
  const std::vector<Case> cases = {
      {"changes kept", {{1, 1, 1}, {2, 2, 1}, {3, 2, 2}}, 10, {1, 2, 3}},
      {"a run keeps its first and its latest",
       {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}},
       10,
       {1, 4}},
      {"the oldest go past the limit", {{1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {4, 4, 4}}, 2, {3, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<ScalePoint> h;
    for (const ScalePoint& p : c.in) AppendScalePoint(h, p, c.limit);
    std::vector<double> times;
    for (const ScalePoint& p : h) times.push_back(p.wall_s);
    EXPECT_EQ(times, c.want_times);
  }
}

WorkloadView View(const std::string& name, int desired, double wall_s, const std::string& rule) {
  WorkloadView v;
  v.ref = {"Deployment", "ns", name};
  v.desired = desired;
  Decision d;
  d.wall = WallTime(Seconds(wall_s));
  d.recommendation.rule = rule;
  v.last = d;
  return v;
}

TEST(LiveBoard, HistoryAndRuleStartFollowEachWorkload) {
  LiveBoard board;
  board.Publish({View("a", 1, 100, "r1"), View("b", 5, 100, "r1")});
  board.Publish({View("b", 6, 115, "r1"), View("a", 2, 115, "r2")});  // order swapped
  board.Publish({View("a", 2, 130, "r2"), View("b", 6, 130, "r1")});
  const auto a = board.Workload("ns/a");
  ASSERT_TRUE(a.has_value());
  ASSERT_EQ(a->history.size(), 3u);
  EXPECT_EQ(a->history[0].desired, 1);
  EXPECT_EQ(a->history[2].wall_s, 130);
  EXPECT_EQ(a->rule_since_s, 115);  // r2 since its first tick
  const auto b = board.Workload("ns/b");
  EXPECT_EQ(b->rule_since_s, 100);
  EXPECT_EQ(b->history.back().desired, 6);
}

}  // namespace
}  // namespace aiscale::control
