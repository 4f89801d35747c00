// The Controller and the warm tier: a policy that keeps replicas asleep gets ApplyTiers on an
// engine with a warm tier, and on one without it the awake size alone, with the reason in the
// Decision (never a failed tick, never a scale every tick for a tier it cannot have).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "control/controller.h"
#include "fakes/fake_actuator.h"
#include "sim/event_queue.h"

namespace aiscale::control {
namespace {

using aiscale::testing::FakeActuator;

// Always wants `awake` serving and `asleep` kept asleep.
class TierPolicy final : public Policy {
 public:
  TierPolicy(int awake, int asleep) : awake_(awake), asleep_(asleep) {}
  std::string_view Name() const override { return "tier"; }
  Recommendation Recommend(const PolicyInput&, PersistentState&) const override {
    Recommendation r{awake_, true, "tier", "fixed", {}};
    r.asleep = asleep_;
    return r;
  }
  std::vector<std::string> Signals() const override { return {}; }

 private:
  int awake_, asleep_;
};

// An engine with a warm tier: records each ApplyTiers.
class WarmActuator final : public Actuator {
 public:
  std::string_view Name() const override { return "warm"; }
  Result<ScaleState> Observe(const WorkloadRef&) override { return s; }
  Status Apply(const WorkloadRef&, int desired) override { return ApplyTiers({}, desired, 0); }
  Status ApplyTiers(const WorkloadRef&, int awake, int asleep) override {
    tiers.push_back({awake, asleep});
    s.current = s.ready = awake;
    s.asleep = asleep;
    return Status::Ok();
  }
  ScaleState s;
  std::vector<std::pair<int, int>> tiers;
};

WorkloadBinding Bind(Actuator* a, int awake, int asleep) {
  WorkloadBinding b;
  b.ref = {"Deployment", "ns", "w"};
  b.policy = std::make_unique<TierPolicy>(awake, asleep);
  b.actuator = a;
  return b;
}

TEST(ControllerWarmTier, EngineWithoutTierServesTheAwakeSizeAndSaysWhy) {
  struct Case {
    const char* name;
    int current;
    Action action;
    std::vector<std::pair<std::string, int>> applies;
  };
  const std::vector<Case> cases = {
      {"awake size already right", 3, Action::kNone, {}},
      {"awake size grows", 2, Action::kScaled, {{"ns/w", 3}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    sim::SimClock clock(AtSeconds(1000));
    FakeActuator actuator;
    actuator.Set("ns/w", c.current, c.current);
    Controller ctl(clock, nullptr);
    ASSERT_TRUE(ctl.Add(Bind(&actuator, 3, 2)).ok());
    ctl.Collect();
    const Decision d = ctl.Tick().at(0);
    EXPECT_EQ(d.action, c.action) << d.action_detail;
    EXPECT_EQ(actuator.applies, c.applies);
    EXPECT_NE(d.action_detail.find("warm tier off"), std::string::npos) << d.action_detail;
    EXPECT_NE(d.action_detail.find("no warm tier"), std::string::npos) << d.action_detail;
    EXPECT_EQ(d.recommendation.asleep, 2);
  }
}

TEST(ControllerWarmTier, EngineWithTierGetsBothSizesOnlyWhenOneChanges) {
  sim::SimClock clock(AtSeconds(1000));
  WarmActuator actuator;
  actuator.s.current = actuator.s.ready = 3;
  Controller ctl(clock, nullptr);
  ASSERT_TRUE(ctl.Add(Bind(&actuator, 3, 2)).ok());
  ctl.Collect();
  const Decision first = ctl.Tick().at(0);
  EXPECT_EQ(first.action, Action::kScaled);
  EXPECT_NE(first.action_detail.find("3 -> 3, 2 asleep"), std::string::npos) << first.action_detail;
  ASSERT_EQ(actuator.tiers.size(), 1u);
  EXPECT_EQ(actuator.tiers[0], std::make_pair(3, 2));
  clock.Advance(Seconds(15));
  ctl.Collect();
  const Decision second = ctl.Tick().at(0);
  EXPECT_EQ(second.action, Action::kNone) << second.action_detail;
  EXPECT_EQ(second.asleep, 2);
  EXPECT_EQ(actuator.tiers.size(), 1u);
}

}  // namespace
}  // namespace aiscale::control
