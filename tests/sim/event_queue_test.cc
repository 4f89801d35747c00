#include "sim/event_queue.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::sim {
namespace {

TEST(EventQueue, OrdersByTimeThenSchedulingOrder) {
  struct Case {
    std::string name;
    std::vector<double> at_s;  // scheduled in this order
    std::vector<int> want;     // indices in the order they must run
  };
  const std::vector<Case> cases = {
      {"by time", {3, 1, 2}, {1, 2, 0}},
      {"ties in scheduling order", {5, 5, 5}, {0, 1, 2}},
      {"mixed", {2, 1, 2, 1}, {1, 3, 0, 2}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EventQueue q;
    std::vector<int> ran;
    std::vector<double> when;
    for (size_t i = 0; i < c.at_s.size(); ++i) {
      q.At(AtSeconds(c.at_s[i]), [&, i] {
        ran.push_back(static_cast<int>(i));
        when.push_back(SinceEpochSeconds(q.Now()));
      });
    }
    EXPECT_EQ(q.Run(), c.at_s.size());
    EXPECT_EQ(ran, c.want);
    for (size_t k = 0; k < ran.size(); ++k) EXPECT_DOUBLE_EQ(when[k], c.at_s[ran[k]]);
  }
}

TEST(EventQueue, RunUntilStopsAtTheHorizonAndAdvancesTheClock) {
  EventQueue q;
  int ran = 0;
  q.At(AtSeconds(1), [&] { ++ran; });
  q.At(AtSeconds(10), [&] { ++ran; });
  EXPECT_EQ(q.RunUntil(AtSeconds(5)), 1u);
  EXPECT_EQ(ran, 1);
  EXPECT_DOUBLE_EQ(SinceEpochSeconds(q.Now()), 5);
  EXPECT_EQ(q.NextWakeup(), AtSeconds(10));
}

TEST(EventQueue, PastEventsRunNowAndEventsCanScheduleEvents) {
  EventQueue q(AtSeconds(100));
  std::vector<double> when;
  q.At(AtSeconds(50), [&] {
    when.push_back(SinceEpochSeconds(q.Now()));
    q.After(Seconds(5), [&] { when.push_back(SinceEpochSeconds(q.Now())); });
  });
  q.Run();
  EXPECT_EQ(when, (std::vector<double>{100, 105}));
}

TEST(EventQueue, StopEndsTheRunWithEventsLeft) {
  EventQueue q;
  q.At(AtSeconds(1), [&] { q.Stop(); });
  q.At(AtSeconds(2), [] {});
  EXPECT_EQ(q.RunUntil(AtSeconds(10)), 1u);
  EXPECT_FALSE(q.empty());
  EXPECT_DOUBLE_EQ(SinceEpochSeconds(q.Now()), 1);
}

TEST(EventQueue, TwoQueuesAreIndependentAndDeterministic) {
  auto trace = [] {
    EventQueue q;
    std::vector<int> out;
    for (int i = 0; i < 50; ++i) q.At(AtSeconds((i * 37) % 11), [&out, i] { out.push_back(i); });
    q.Run();
    return out;
  };
  EventQueue other;
  other.At(AtSeconds(1000), [] {});
  other.Run();
  EXPECT_EQ(trace(), trace());
  EXPECT_DOUBLE_EQ(SinceEpochSeconds(other.Now()), 1000);
}

}  // namespace
}  // namespace aiscale::sim
