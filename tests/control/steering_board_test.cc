// Steering end to end inside the control layer: SteeringBoard records each API action as a
// Decision and a stored override, the Controller obeys the override between constrain and act
// (and says so in every Decision), and a restarted controller on the same store restores it.
#include "control/steering_board.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <thread>

#include "control/controller.h"
#include "decide/policies/static_policy.h"
#include "fakes/fake_actuator.h"
#include "sim/event_queue.h"
#include "store/memory_store.h"

namespace aiscale::control {
namespace {

using aiscale::testing::FakeActuator;

// A controller over one static-policy workload "ns/w" (policy asks for `want`), with a board.
struct Rig {
  explicit Rig(Store* store, int want = 5)
      : clock(AtSeconds(1'790'000'000)),
        steering(clock, store, board),
        ctl(clock, store, Options()) {
    actuator.Set("ns/w", 3, 3);
    WorkloadBinding b;
    b.ref = {"Deployment", "ns", "w"};
    b.policy = std::make_shared<decide::StaticPolicy>(want);
    b.actuator = &actuator;
    b.min_replicas = 1;
    b.max_replicas = 8;
    add_status = ctl.Add(std::move(b));
  }
  ControllerOptions Options() {
    ControllerOptions o;
    o.board = &board;
    o.steering = &steering;
    return o;
  }
  Decision Tick() {
    clock.AdvanceTo(clock.Now() + Seconds(15));
    return ctl.Tick().at(0);
  }
  Result<SteerOutcome> Apply(SteerOp op, int replicas = 0,
                             PauseDirection d = PauseDirection::kBoth) {
    SteerRequest r;
    r.op = op;
    r.workload = "w";
    r.replicas = replicas;
    r.direction = d;
    return steering.Apply(r);
  }

  sim::SimClock clock;
  LiveBoard board;
  FakeActuator actuator;
  SteeringBoard steering;
  Controller ctl;
  Status add_status;
};

TEST(SteeringBoard, NotReadyBeforeTheFirstTickThenUnknownIsNotFound) {
  store::MemoryStore store;
  Rig rig(&store);
  ASSERT_TRUE(rig.add_status.ok());
  EXPECT_TRUE(rig.Apply(SteerOp::kPause).status().IsUnavailable());
  rig.Tick();
  SteerRequest r;
  r.workload = "nope";
  EXPECT_TRUE(rig.steering.Apply(r).status().IsNotFound());
}

TEST(SteeringBoard, EachActionIsRecordedAndObeyed) {
  struct Case {
    const char* name;
    SteerOp op;
    int replicas;
    PauseDirection direction;
    int want_after;  // the scale after the next tick (policy asks for 5 from 3)
    const char* reason_part;
  };
  const std::vector<Case> cases = {
      {"pause both holds", SteerOp::kPause, 0, PauseDirection::kBoth, 3, "paused by API"},
      {"pause down lets it grow", SteerOp::kPause, 0, PauseDirection::kDown, 5,
       "paused by API (scale-down only)"},
      {"pause up holds a growth", SteerOp::kPause, 0, PauseDirection::kUp, 3,
       "paused by API (scale-up only)"},
      {"pin to 2", SteerOp::kPin, 2, PauseDirection::kBoth, 2, "pinned by API to 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    store::MemoryStore store;
    Rig rig(&store);
    rig.actuator.Set("ns/w", 3, 3);
    Rig* r = &rig;
    // The first tick makes the view ready; undo its scale-up so each case starts at 3.
    r->Tick();
    r->actuator.Set("ns/w", 3, 3);
    auto out = r->Apply(c.op, c.replicas, c.direction);
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_NE(out->message.find(c.reason_part), std::string::npos) << out->message;
    // Recorded before it took effect: the newest stored decision is the action.
    auto recent = store.Recent("ns/w", 1);
    ASSERT_TRUE(recent.ok() && recent->size() == 1);
    EXPECT_EQ(recent->back().recommendation.rule, "steering");
    EXPECT_NE(recent->back().recommendation.reason.find(c.reason_part), std::string::npos);
    const Decision d = r->Tick();
    EXPECT_EQ(r->actuator.state["ns/w"].current, c.want_after);
    EXPECT_NE(d.constrain_reason.find(c.reason_part), std::string::npos) << d.constrain_reason;
    const auto view = r->board.Workload("ns/w");
    ASSERT_TRUE(view.has_value());
    EXPECT_NE(view->steering.mode, SteerMode::kNone);
    // Resume: the policy decides again and the next decision no longer mentions it.
    ASSERT_TRUE(r->Apply(SteerOp::kResume).ok());
    const Decision after = r->Tick();
    EXPECT_EQ(r->actuator.state["ns/w"].current, 5);
    EXPECT_EQ(after.constrain_reason.find("by API"), std::string::npos) << after.constrain_reason;
  }
}

TEST(SteeringBoard, PinBeyondMaxIsRefusedWithTheReasonAndChangesNothing) {
  store::MemoryStore store;
  Rig rig(&store);
  rig.Tick();
  auto out = rig.Apply(SteerOp::kPin, 9);
  ASSERT_TRUE(out.status().IsInvalid());
  EXPECT_NE(out.status().message().find("above max_replicas 8"), std::string::npos);
  EXPECT_TRUE(rig.steering.Snapshot()->empty());
  EXPECT_EQ(store.Recent("ns/w", 5)->back().recommendation.rule, "static");
}

TEST(SteeringBoard, UnpinOfAPausedWorkloadIsAConflict) {
  store::MemoryStore store;
  Rig rig(&store);
  rig.Tick();
  ASSERT_TRUE(rig.Apply(SteerOp::kPause).ok());
  EXPECT_TRUE(rig.Apply(SteerOp::kUnpin).status().IsConflict());
  ASSERT_TRUE(rig.Apply(SteerOp::kPin, 4).ok());
  EXPECT_TRUE(rig.Apply(SteerOp::kUnpin).ok());
  EXPECT_TRUE(rig.steering.Snapshot()->empty());
}

TEST(SteeringBoard, AnOverrideSurvivesARestartOnTheSameStore) {
  store::MemoryStore store;
  {
    Rig rig(&store);
    rig.Tick();
    ASSERT_TRUE(rig.Apply(SteerOp::kPin, 2).ok());
  }
  Rig restarted(&store);  // a new controller and board over the same store
  ASSERT_TRUE(restarted.add_status.ok());
  const Decision d = restarted.Tick();
  EXPECT_EQ(d.constrained, 2);
  EXPECT_NE(d.constrain_reason.find("pinned by API to 2"), std::string::npos);
}

// Never valid: the policy a workload has while its signals are missing.
class NoAnswerPolicy final : public Policy {
 public:
  std::string_view Name() const override { return "no_answer"; }
  Recommendation Recommend(const PolicyInput&, PersistentState&) const override {
    return {0, false, "no_data", "nothing to go on", {}};
  }
  std::vector<std::string> Signals() const override { return {}; }
};

TEST(SteeringBoard, APinHoldsEvenWhenThePolicyHasNoValidRecommendation) {
  store::MemoryStore store;
  Rig rig(&store);
  rig.Tick();
  ASSERT_TRUE(rig.Apply(SteerOp::kPin, 6).ok());
  WorkloadBinding b;
  b.ref = {"Deployment", "ns", "w"};
  b.policy = std::make_shared<NoAnswerPolicy>();
  b.actuator = &rig.actuator;
  b.min_replicas = 1;
  b.max_replicas = 8;
  ASSERT_TRUE(rig.ctl.Reconfigure(0, b).ok());
  const Decision d = rig.Tick();
  EXPECT_FALSE(d.recommendation.valid);
  EXPECT_EQ(d.constrained, 6);
  EXPECT_EQ(rig.actuator.state["ns/w"].current, 6);
  ASSERT_TRUE(rig.Apply(SteerOp::kPause).ok());
  EXPECT_EQ(rig.Tick().constrained, 6);  // paused without a valid recommendation: holds
}

// The API's threads steer while the controller ticks (the daemon's situation); under
// scripts/sanitize.sh tsan this is the race check. Every action is recorded, and the override
// in force at the end is the last one applied.
TEST(SteeringBoard, ApplyingWhileTickingIsSafe) {
  store::MemoryStore store;
  Rig rig(&store);
  rig.Tick();
  std::atomic<bool> done{false};
  std::thread api([&] {
    for (int i = 0; i < 200; ++i) {
      const auto r = rig.Apply(i % 2 ? SteerOp::kResume : SteerOp::kPause);
      EXPECT_TRUE(r.ok()) << r.status().message();
    }
    ASSERT_TRUE(rig.Apply(SteerOp::kPin, 4).ok());
    done = true;
  });
  int ticks = 0;
  while (!done || ticks < 5) {
    rig.ctl.Tick();
    ++ticks;
  }
  api.join();
  const Decision last = rig.Tick();
  EXPECT_EQ(last.constrained, 4);
  EXPECT_NE(last.constrain_reason.find("pinned by API to 4"), std::string::npos);
  // All of them: the loop ticks as often as it can while the API thread steers (thousands of
  // ticks on an idle machine), so the 201 steering decisions need not be among the last 1000.
  auto recent = store.Recent("ns/w", std::numeric_limits<size_t>::max());
  ASSERT_TRUE(recent.ok());
  const auto steering = std::count_if(recent->begin(), recent->end(), [](const Decision& d) {
    return d.recommendation.rule == "steering";
  });
  EXPECT_EQ(steering, 201);
}

}  // namespace
}  // namespace aiscale::control
