#include "decide/forecast/error_quantile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "decide/synthetic_series.h"

namespace aiscale::decide::forecast {
namespace {

ErrorQuantileParams Params(size_t window, double q, ErrorMode mode = ErrorMode::kAbsolute) {
  ErrorQuantileParams p;
  p.window = window;
  p.quantile = q;
  p.mode = mode;
  return p;
}

// The same definition, the slow way: linear between order statistics of a copy.
double BruteQuantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

TEST(ErrorQuantile, QuantileAndMargin) {
  struct Case {
    std::string name;
    ErrorQuantileParams params;
    std::function<void(ErrorQuantile&)> feed;
    double want_quantile;
    double forecast;  // for Margin()
    double want_margin;
  };
  const std::vector<Case> cases = {
      {"empty", Params(10, 0.95), [](ErrorQuantile&) {}, 0, 100, 0},
      {"p95 of 1..100", Params(100, 0.95),
       [](ErrorQuantile& e) {
         for (int i = 1; i <= 100; ++i) e.AddError(i);
       },
       95.05, 0, 95.05},
      {"window keeps the newest", Params(10, 0.5),
       [](ErrorQuantile& e) {
         for (int i = 1; i <= 20; ++i) e.AddError(i);
       },
       15.5, 0, 15.5},
      {"over-forecasting earns no discount", Params(10, 0.95),
       [](ErrorQuantile& e) {
         for (int i = 1; i <= 10; ++i) e.AddError(-i);
       },
       -1.45, 50, 0},
      {"relative margin scales with the forecast", Params(10, 0.95, ErrorMode::kRelative),
       [](ErrorQuantile& e) {
         for (int i = 0; i < 10; ++i) e.AddError(0.1);
       },
       0.1, 200, 20},
      {"relative margin is zero at zero forecast", Params(10, 0.95, ErrorMode::kRelative),
       [](ErrorQuantile& e) { e.AddError(0.5); }, 0.5, 0, 0},
      {"non-finite errors ignored", Params(10, 0.95),
       [](ErrorQuantile& e) {
         e.AddError(std::nan(""));
         e.AddError(INFINITY);
         e.AddError(3);
       },
       3, 0, 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    PersistentState st;
    ErrorQuantile e(c.params, st, "err.");
    c.feed(e);
    EXPECT_NEAR(e.Quantile(), c.want_quantile, 1e-9);
    EXPECT_NEAR(e.Margin(c.forecast), c.want_margin, 1e-9);
  }
}

TEST(ErrorQuantile, ScoresForecastsMadeAhead) {
  struct Case {
    std::string name;
    ErrorMode mode;
    double floor;
    std::function<void(ErrorQuantile&)> feed;
    size_t want_count;
    double want_quantile;
  };
  const std::vector<Case> cases = {
      {"absolute miss", ErrorMode::kAbsolute, 1,
       [](ErrorQuantile& e) {
         e.RecordForecast(10, 5);
         EXPECT_FALSE(e.RecordActual(9, 100));  // nothing pending for 9
         EXPECT_TRUE(e.RecordActual(10, 7));
         EXPECT_FALSE(e.RecordActual(10, 7));  // scored once
       },
       1, 2},
      {"relative miss", ErrorMode::kRelative, 1,
       [](ErrorQuantile& e) {
         e.RecordForecast(3, 100);
         e.RecordActual(3, 110);
       },
       1, 0.1},
      {"relative floor at tiny forecasts", ErrorMode::kRelative, 2,
       [](ErrorQuantile& e) {
         e.RecordForecast(3, 0);
         e.RecordActual(3, 1);
       },
       1, 0.5},
      {"a newer forecast for the same slot wins", ErrorMode::kAbsolute, 1,
       [](ErrorQuantile& e) {
         e.RecordForecast(4, 1);
         e.RecordForecast(4 + 8, 2);  // pending = 8: same slot
         EXPECT_FALSE(e.RecordActual(4, 10));
         EXPECT_TRUE(e.RecordActual(12, 10));
       },
       1, 8},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ErrorQuantileParams p = Params(100, 0.95, c.mode);
    p.relative_floor = c.floor;
    p.pending = 8;
    PersistentState st;
    ErrorQuantile e(p, st, "err.");
    c.feed(e);
    EXPECT_EQ(e.count(), c.want_count);
    EXPECT_NEAR(e.Quantile(), c.want_quantile, 1e-9);
  }
}

TEST(ErrorQuantile, MatchesBruteForceOnASlidingWindow) {
  struct Case {
    std::string name;
    size_t window;
    double q;
    int steps;
  };
  const std::vector<Case> cases = {
      {"p95 window 50", 50, 0.95, 500},
      {"p50 window 7", 7, 0.5, 200},
      {"p99.9 window 1440", 1440, 0.999, 4000},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    PersistentState st;
    ErrorQuantile e(Params(c.window, c.q), st, "err.");
    std::deque<double> ref;
    aiscale::testing::Noise noise(3);
    for (int i = 0; i < c.steps; ++i) {
      // Some exact repeats, so equal values enter and leave the sorted copy.
      const double v = (i % 5 == 0) ? 1.0 : std::round(noise.Normal() * 10) / 10;
      e.AddError(v);
      ref.push_back(v);
      if (ref.size() > c.window) ref.pop_front();
      if (c.window < 100 || i % 37 == 0) {  // the brute force is O(window log window)
        ASSERT_NEAR(e.Quantile(), BruteQuantile({ref.begin(), ref.end()}, c.q), 1e-12) << i;
      }
    }
    EXPECT_EQ(e.count(), std::min<size_t>(c.window, c.steps));
  }
}

TEST(ErrorQuantile, StateIsBoundedAndResumable) {
  const ErrorQuantileParams p = Params(20, 0.9);
  PersistentState split, whole;
  for (int i = 0; i < 50; ++i) {
    ErrorQuantile a(p, split, "err.");  // a fresh view each time, as the policy makes one
    a.AddError(i % 7);
  }
  ErrorQuantile b(p, whole, "err.");
  for (int i = 0; i < 50; ++i) b.AddError(i % 7);
  EXPECT_EQ(split, whole);
  EXPECT_EQ(whole.values.at("err.ring").size(), 20u);
  EXPECT_EQ(whole.values.at("err.sorted").size(), 20u);
  // A smaller window than the stored one starts over instead of guessing which to keep.
  ErrorQuantile smaller(Params(10, 0.9), whole, "err.");
  EXPECT_EQ(smaller.count(), 0u);
}

}  // namespace
}  // namespace aiscale::decide::forecast
