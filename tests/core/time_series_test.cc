#include "core/time_series.h"

#include <gtest/gtest.h>

namespace aiscale {
namespace {

TEST(TimeSeries, DropsOldestBeyondCapacity) {
  TimeSeries ts(3);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ts.Append(AtSeconds(i), i));
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_EQ(ts.at(0).value, 2);
  EXPECT_EQ(ts.Latest()->value, 4);
}

TEST(TimeSeries, RejectsOutOfOrderSample) {
  TimeSeries ts(4);
  ASSERT_TRUE(ts.Append(AtSeconds(10), 1));
  EXPECT_FALSE(ts.Append(AtSeconds(9), 2));
  EXPECT_EQ(ts.size(), 1u);
}

TEST(TimeSeries, WindowIsHalfOpenOnTheOldSide) {
  struct Case {
    const char* name;
    double window_s;
    std::optional<double> mean;
  };
  TimeSeries ts;
  for (int i = 0; i <= 10; ++i) ts.Append(AtSeconds(i), i);
  const std::vector<Case> cases = {
      {"last sample only", 1, 10},
      {"window excludes its start", 2, 9.5},
      {"all", 100, 5},
      {"empty window", 0, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ts.WindowMean(AtSeconds(10), Seconds(c.window_s)), c.mean);
  }
}

}  // namespace
}  // namespace aiscale

namespace aiscale {
namespace {

// The ring grows as samples arrive, then wraps at capacity; Clear starts it over.
TEST(TimeSeriesGrowth, GrowsToCapacityThenDropsTheOldest) {
  TimeSeries ts(3);
  EXPECT_EQ(ts.capacity(), 3u);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    for (int i = 1; i <= 5; ++i) ASSERT_TRUE(ts.Append(AtSeconds(i), i));
    ASSERT_EQ(ts.size(), 3u);
    EXPECT_EQ(ts.at(0).value, 3);
    EXPECT_EQ(ts.at(2).value, 5);
    ts.Clear();
    EXPECT_TRUE(ts.empty());
    ASSERT_TRUE(ts.Append(AtSeconds(0.5), 9));  // after Clear, older times are fine again
    EXPECT_EQ(ts.Latest()->value, 9);
    ts.Clear();
  }
}

}  // namespace
}  // namespace aiscale
