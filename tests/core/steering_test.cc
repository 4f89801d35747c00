// The pure steering rule (core/steering.h): what each override does to the pipeline's size, the
// pin bounds check, end times, and the stored form.
#include "core/steering.h"

#include <gtest/gtest.h>

namespace aiscale {
namespace {

const WallTime kNow = WallTime(Seconds(1'790'000'000));

Steering Paused(PauseDirection d) {
  Steering s;
  s.mode = SteerMode::kPaused;
  s.direction = d;
  s.since = kNow - Seconds(60);
  return s;
}

Steering Pinned(int n) {
  Steering s;
  s.mode = SteerMode::kPinned;
  s.replicas = n;
  s.since = kNow - Seconds(60);
  return s;
}

TEST(Steer, EachOverrideAgainstUpAndDown) {
  struct Case {
    const char* name;
    Steering s;
    int current, constrained;
    int want;
    bool held;
    const char* note_part;  // "" : no note
  };
  Steering expired = Pinned(2);
  expired.until = kNow - Seconds(1);
  Steering until_later = Paused(PauseDirection::kBoth);
  until_later.until = kNow + Seconds(1);
  const std::vector<Case> cases = {
      {"none passes through", Steering{}, 3, 5, 5, false, ""},
      {"paused both holds an up", Paused(PauseDirection::kBoth), 3, 5, 3, true,
       "paused by API since"},
      {"paused both holds a down", Paused(PauseDirection::kBoth), 3, 1, 3, true,
       "(the pipeline asked for 1)"},
      {"paused down holds a down", Paused(PauseDirection::kDown), 3, 1, 3, true,
       "(scale-down only)"},
      {"paused down lets an up through", Paused(PauseDirection::kDown), 3, 5, 5, false,
       "stays at 5"},
      {"paused up holds an up", Paused(PauseDirection::kUp), 3, 5, 3, true, "(scale-up only)"},
      {"paused up lets a down through", Paused(PauseDirection::kUp), 3, 1, 1, false, "stays at 1"},
      {"pinned overrides the pipeline", Pinned(2), 3, 5, 2, true, "pinned by API to 2"},
      {"pin equal to the pipeline is not held", Pinned(5), 3, 5, 5, false, "holds 5"},
      {"pin above the bounds is clamped", Pinned(50), 3, 5, 10, true, "outside the bounds 1..10"},
      {"expired pin no longer binds", expired, 3, 5, 5, false, ""},
      {"pause until a later time binds", until_later, 3, 5, 3, true, "until 20"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const SteerResult r = Steer(c.s, c.current, c.constrained, 1, 10, kNow);
    EXPECT_EQ(r.desired, c.want);
    EXPECT_EQ(r.held, c.held);
    if (*c.note_part == '\0') {
      EXPECT_EQ(r.note, "");
    } else {
      EXPECT_NE(r.note.find(c.note_part), std::string::npos) << r.note;
    }
  }
}

TEST(Steer, CheckPinSaysWhichBound) {
  EXPECT_TRUE(CheckPin(4, 1, 4).ok());
  EXPECT_TRUE(CheckPin(1, 1, 4).ok());
  const Status above = CheckPin(5, 1, 4);
  EXPECT_TRUE(above.IsInvalid());
  EXPECT_NE(above.message().find("above max_replicas 4"), std::string::npos) << above.message();
  const Status below = CheckPin(0, 1, 4);
  EXPECT_NE(below.message().find("below min_replicas 1"), std::string::npos) << below.message();
}

TEST(Steer, ParseUntil) {
  struct Case {
    const char* text;
    double want_after_s;  // < 0: an error
  };
  const std::vector<Case> cases = {
      {"90s", 90},
      {"30m", 1800},
      {"2h", 7200},
      {"1d", 86400},
      {"2026-09-21T15:13:20Z", 3600},  // kNow is 2026-09-21T14:13:20Z
      {"2026-09-21T15:13:20.5Z", 3600.5},
      {"2026-09-21T13:13:20Z", -1},  // the past
      {"0m", -1},
      {"-5m", -1},
      {"5 m", -1},
      {"soon", -1},
      {"2026-13-01T00:00:00Z", -1},
      {"2026-09-21T15:13:20+02:00", -1},
      {"", -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto t = ParseUntil(c.text, kNow);
    if (c.want_after_s < 0) {
      EXPECT_TRUE(t.status().IsInvalid());
    } else {
      ASSERT_TRUE(t.ok()) << t.status().message();
      EXPECT_NEAR(ToSeconds(*t - kNow), c.want_after_s, 1e-6);
    }
  }
}

TEST(Steer, StateRoundTripsAndRejectsUnknownLayouts) {
  Steering s = Paused(PauseDirection::kUp);
  s.until = kNow + Seconds(3600);
  auto back = SteeringFromState(SteeringToState(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->mode, s.mode);
  EXPECT_EQ(back->direction, s.direction);
  EXPECT_NEAR(ToSeconds(back->until - s.until), 0, 1e-3);
  auto pin = SteeringFromState(SteeringToState(Pinned(7)));
  ASSERT_TRUE(pin.ok());
  EXPECT_EQ(pin->replicas, 7);
  EXPECT_EQ(SteeringFromState(PersistentState{})->mode, SteerMode::kNone);
  PersistentState future;
  future.values["steer"] = {2, 1, 0, 0, 0, 0, 0};
  EXPECT_FALSE(SteeringFromState(future).ok());
}

TEST(Steer, DirectionNames) {
  for (auto d : {PauseDirection::kBoth, PauseDirection::kDown, PauseDirection::kUp}) {
    EXPECT_EQ(*PauseDirectionFromName(PauseDirectionName(d)), d);
  }
  EXPECT_TRUE(PauseDirectionFromName("sideways").status().IsInvalid());
}

}  // namespace
}  // namespace aiscale
