// Scenario tests of the autoscaling/v2 behavior stabilizer that step time on purpose, plus its
// config parsing and validation.
#include "decide/stabilizer.h"

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

using Type = HpaScalingPolicy::Type;

HpaScalingRules Rules(int window, SelectPolicy select, std::vector<HpaScalingPolicy> policies) {
  HpaScalingRules r;
  r.stabilization_window_seconds = window;
  r.select_policy = select;
  r.policies = std::move(policies);
  return r;
}

// A workload whose controller ticks at chosen instants through the Stabilizer seam.
struct Workload {
  explicit Workload(HpaBehavior b, int replicas) : stabilizer(std::move(b)), current(replicas) {}
  // One tick at `t` seconds: stabilize `rec`, "apply" the result and record the scale.
  int Tick(double t, int rec) {
    const StabilizeResult r = stabilizer.Stabilize(rec, current, AtSeconds(t), state);
    if (r.desired != current) stabilizer.RecordScale(current, r.desired, AtSeconds(t), state);
    current = r.desired;
    last_reason = r.reason;
    return current;
  }
  HpaBehaviorStabilizer stabilizer;
  PersistentState state;
  int current;
  std::string last_reason;
};

TEST(HpaBehaviorStabilizer, DefaultDownWindowHoldsFiveMinutesToTheSecond) {
  Workload w(HpaBehavior::Defaults(), 5);
  EXPECT_EQ(w.Tick(0, 5), 5);
  EXPECT_EQ(w.Tick(2, 5), 5);  // the last high recommendation, at 0m02s
  for (int t = 4; t < 300; t += 2) {
    ASSERT_EQ(w.Tick(t, 2), 5) << "at " << t << " s";
  }
  EXPECT_EQ(w.Tick(300, 2), 5);  // 5m00s: 0m02s is still inside (now-300 s, now]
  EXPECT_NE(w.last_reason.find("ScaleDownStabilized"), std::string::npos) << w.last_reason;
  EXPECT_EQ(w.Tick(301, 2), 5);  // 5m01s: still inside
  EXPECT_EQ(w.Tick(302, 2), 2);  // 5m02s: it has left the window
}

TEST(HpaBehaviorStabilizer, DefaultScaleUpIsFourPodsOrDoublePer15Seconds) {
  Workload w(HpaBehavior::Defaults(), 1);
  EXPECT_EQ(w.Tick(0, 20), 5);  // max(1 + 4, 1 * 2)
  EXPECT_EQ(w.Tick(5, 20), 5);  // the +4 at 0 s is inside the period: it started at 1
  EXPECT_EQ(w.Tick(14, 20), 5);
  EXPECT_EQ(w.Tick(15, 20), 10);  // an event exactly 15 s old has left it: max(5 + 4, 10)
  EXPECT_EQ(w.Tick(29, 20), 10);
  EXPECT_EQ(w.Tick(30, 20), 20);  // max(10 + 4, 20)
}

TEST(HpaBehaviorStabilizer, PoliciesAndSelectPolicy) {
  struct Case {
    std::string name;
    HpaScalingRules up;
    HpaScalingRules down;
    int current;
    int rec;
    int expected;
  };
  const HpaScalingPolicy pods2{Type::kPods, 2, 60};
  const HpaScalingPolicy pct50{Type::kPercent, 50, 60};
  const HpaScalingRules open_down = Rules(0, SelectPolicy::kMax, {{Type::kPercent, 100, 15}});
  const HpaScalingRules open_up = Rules(0, SelectPolicy::kMax, {{Type::kPercent, 1000, 15}});
  const std::vector<Case> cases = {
      {"up pods only", Rules(0, SelectPolicy::kMax, {pods2}), open_down, 10, 30, 12},
      {"up percent only", Rules(0, SelectPolicy::kMax, {pct50}), open_down, 10, 30, 15},
      {"up Max picks the larger change", Rules(0, SelectPolicy::kMax, {pods2, pct50}), open_down,
       10, 30, 15},
      {"up Min picks the smaller change", Rules(0, SelectPolicy::kMin, {pods2, pct50}), open_down,
       10, 30, 12},
      {"up Disabled holds", Rules(0, SelectPolicy::kDisabled, {pct50}), open_down, 10, 30, 10},
      {"up percent rounds up", Rules(0, SelectPolicy::kMax, {{Type::kPercent, 10, 60}}), open_down,
       3, 30, 4},
      {"down Max removes the most", open_up, Rules(0, SelectPolicy::kMax, {pods2, pct50}), 10, 1,
       5},
      {"down Min removes the least", open_up, Rules(0, SelectPolicy::kMin, {pods2, pct50}), 10, 1,
       8},
      {"down Disabled holds", open_up, Rules(0, SelectPolicy::kDisabled, {pct50}), 10, 1, 10},
      {"down percent truncates", open_up, Rules(0, SelectPolicy::kMax, {{Type::kPercent, 30, 60}}),
       5, 1, 3},
      {"within the limits passes through", open_up, Rules(0, SelectPolicy::kMax, {pct50}), 10, 7,
       7},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    HpaBehavior b;
    b.scale_up = c.up;
    b.scale_down = c.down;
    Workload w(b, c.current);
    EXPECT_EQ(w.Tick(100, c.rec), c.expected);
  }
}

TEST(HpaBehaviorStabilizer, ScaleDownPeriodCountsPastEvents) {
  HpaBehavior b = HpaBehavior::Defaults();
  b.scale_down = Rules(0, SelectPolicy::kMax, {{Type::kPercent, 50, 60}});
  Workload w(b, 10);
  EXPECT_EQ(w.Tick(0, 1), 5);
  EXPECT_EQ(w.Tick(30, 1), 5);  // the period started at 10: its 50% is already used
  EXPECT_EQ(w.Tick(59, 1), 5);
  EXPECT_EQ(w.Tick(60, 1), 2);  // the -5 at 0 s has left the period: 50% of 5, truncated
}

TEST(HpaBehaviorStabilizer, UpWindowTakesTheLowestRecentRecommendation) {
  HpaBehavior b = HpaBehavior::Defaults();
  b.scale_up.stabilization_window_seconds = 60;
  Workload w(b, 2);
  EXPECT_EQ(w.Tick(0, 3), 3);   // no history: passes through
  EXPECT_EQ(w.Tick(30, 8), 3);  // lowest in (now-60 s, now] is 3
  EXPECT_EQ(w.Tick(59, 8), 3);
  EXPECT_EQ(w.Tick(60, 8), 7);  // the 3 has left the window; the rate allows max(3 + 4, 6)
  EXPECT_EQ(w.Tick(75, 8), 8);
}

// The clock went back an hour (a reboot, a leader on a slower clock): the recommendations of 4
// stamped ahead stayed inside the 60 s up-window for that hour, and a recommendation of 20 was
// held at 4. Counted as made now, they leave the window a window later.
TEST(HpaBehaviorStabilizer, EntriesFromAClockThatWentBackLeaveTheWindow) {
  HpaBehavior b = HpaBehavior::Defaults();
  b.scale_up.stabilization_window_seconds = 60;
  Workload w(b, 4);
  for (double t = 3600; t <= 3660; t += 15) w.Tick(t, 4);
  EXPECT_EQ(w.Tick(0, 20), 4);  // the clock is back at 0: inside the window now
  double t = 15;
  for (; t <= 60; t += 15) w.Tick(t, 20);
  EXPECT_GT(w.current, 4) << w.last_reason;
  for (; t <= 240; t += 15) w.Tick(t, 20);
  EXPECT_EQ(w.current, 20) << w.last_reason;
}

TEST(HpaBehaviorStabilizer, HistorySurvivesStateRoundTripAndStaysBounded) {
  HpaBehaviorStabilizer s(HpaBehavior::Defaults());
  PersistentState state;
  const double t0 = 1e9 + 0.123456789;  // seconds since epoch large enough to test precision
  int current = 10;
  for (int i = 0; i < 5000; ++i) {
    const StabilizeResult r = s.Stabilize(i % 2 ? 12 : 9, current, AtSeconds(t0 + i), state);
    if (r.desired != current) s.RecordScale(current, r.desired, AtSeconds(t0 + i), state);
    current = r.desired;
  }
  const BehaviorHistory h = BehaviorHistory::Load(state);
  // One entry per second over the 300 s down window, plus the slot being reused.
  EXPECT_LE(h.recommendations.size(), 305u);
  EXPECT_GE(h.recommendations.size(), 300u);
  EXPECT_LE(h.scale_up_events.size() + h.scale_down_events.size(), 40u);
  PersistentState again;
  h.Save(again);
  EXPECT_EQ(again, state);
  const BehaviorHistory h2 = BehaviorHistory::Load(again);
  ASSERT_EQ(h2.recommendations.size(), h.recommendations.size());
  for (size_t i = 0; i < h.recommendations.size(); ++i) {
    EXPECT_EQ(h2.recommendations[i].at, h.recommendations[i].at);
  }
}

TEST(HpaBehaviorStabilizer, StoreScaleEventReusesTheLastOutdatedSlot) {
  // horizontal_test.go TestStoreScaleEvents "replace one entry, use policies with different
  // periods": events 8@29s, 6@59s, 7@61s, 9@61s with periods 60 and 30; storing +5 marks the
  // two 61 s events outdated and replaces the last of them.
  HpaBehavior b = HpaBehavior::Defaults();
  b.scale_up = Rules(0, SelectPolicy::kMax, {{Type::kPods, 10, 60}, {Type::kPercent, 100, 30}});
  const TimePoint now = AtSeconds(1000);
  BehaviorHistory h;
  for (auto [change, ago] :
       std::vector<std::pair<int, double>>{{8, 29}, {6, 59}, {7, 61}, {9, 61}}) {
    h.scale_up_events.push_back({now - Seconds(ago), change, false});
  }
  StoreScaleEvent(b, h, 10, 15, now);
  ASSERT_EQ(h.scale_up_events.size(), 4u);
  const std::vector<std::pair<int, bool>> want = {{8, false}, {6, false}, {7, true}, {5, false}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(h.scale_up_events[i].value, want[i].first) << i;
    EXPECT_EQ(h.scale_up_events[i].outdated, want[i].second) << i;
  }
}

struct ParseCase {
  std::string name;
  std::string yaml;
  std::string error_path;  // empty: expect no error
};

TEST(HpaBehaviorStabilizer, ParsesKubernetesFieldNames) {
  config::ConfigErrors errors;
  const auto node = config::ParseConfig(R"(
scaleUp:
  stabilizationWindowSeconds: 30
  selectPolicy: Min
  policies:
    - {type: Pods, value: 3, periodSeconds: 20}
scaleDown:
  selectPolicy: Disabled
)",
                                        "b.yaml", errors);
  const HpaBehavior b = HpaBehavior::Parse(node);
  ASSERT_TRUE(errors.empty()) << errors.ToStatus().message();
  EXPECT_EQ(b.scale_up.stabilization_window_seconds, 30);
  EXPECT_EQ(b.scale_up.select_policy, SelectPolicy::kMin);
  ASSERT_EQ(b.scale_up.policies.size(), 1u);
  EXPECT_EQ(b.scale_up.policies[0].value, 3);
  EXPECT_EQ(b.scale_up.policies[0].period_seconds, 20);
  // Unset fields take the defaults, as the API server's defaulting does.
  EXPECT_EQ(b.scale_down.stabilization_window_seconds, 300);
  EXPECT_EQ(b.scale_down.select_policy, SelectPolicy::kDisabled);
  EXPECT_EQ(b.scale_down.policies.size(), 1u);
}

TEST(HpaBehaviorStabilizer, ValidationErrors) {
  const std::vector<ParseCase> cases = {
      {"valid", "scaleDown: {stabilizationWindowSeconds: 3600}", ""},
      {"negative window", "scaleDown: {stabilizationWindowSeconds: -1}",
       "behavior.scaleDown.stabilizationWindowSeconds"},
      {"window over an hour", "scaleUp: {stabilizationWindowSeconds: 3601}",
       "behavior.scaleUp.stabilizationWindowSeconds"},
      {"unknown select policy", "scaleUp: {selectPolicy: Fastest}",
       "behavior.scaleUp.selectPolicy"},
      {"unknown policy type", "scaleUp: {policies: [{type: Nodes, value: 1, periodSeconds: 15}]}",
       "behavior.scaleUp.policies[0].type"},
      {"zero value", "scaleUp: {policies: [{type: Pods, value: 0, periodSeconds: 15}]}",
       "behavior.scaleUp.policies[0].value"},
      {"zero period", "scaleDown: {policies: [{type: Pods, value: 1, periodSeconds: 0}]}",
       "behavior.scaleDown.policies[0].periodSeconds"},
      {"period over 30 minutes",
       "scaleDown: {policies: [{type: Percent, value: 1, periodSeconds: 1801}]}",
       "behavior.scaleDown.policies[0].periodSeconds"},
      {"missing period", "scaleDown: {policies: [{type: Percent, value: 1}]}",
       "behavior.scaleDown.policies[0]"},
      {"empty policies", "scaleDown: {policies: []}", "behavior.scaleDown.policies"},
      {"unknown field", "scaleUp: {stabilizationWindow: 10}",
       "behavior.scaleUp.stabilizationWindow"},
      {"unknown direction", "scaleSideways: {}", "behavior.scaleSideways"},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errors;
    const auto root = config::ParseConfig("behavior:\n  " + c.yaml + "\n", "b.yaml", errors);
    ASSERT_TRUE(errors.empty()) << errors.ToStatus().message();
    HpaBehavior::Parse(root.Child("behavior"));
    if (c.error_path.empty()) {
      EXPECT_TRUE(errors.empty()) << errors.ToStatus().message();
      continue;
    }
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors.all()[0].path, c.error_path) << errors.ToStatus().message();
    EXPECT_GT(errors.all()[0].line, 0);
  }
}

TEST(HpaBehaviorStabilizer, FactoryUsesDefaultsOnlyForHpa) {
  config::ConfigErrors errors;
  const auto root = config::ParseConfig("other: 1\n", "w.yaml", errors);
  EXPECT_EQ(CreateStabilizer(root.Child("behavior"), /*hpa_defaults=*/false), nullptr);
  auto s = CreateStabilizer(root.Child("behavior"), /*hpa_defaults=*/true);
  ASSERT_NE(s, nullptr);
  PersistentState st;
  EXPECT_EQ(s->Stabilize(100, 10, AtSeconds(0), st).desired, 20);
}

}  // namespace
}  // namespace aiscale::decide
