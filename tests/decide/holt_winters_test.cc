#include "decide/forecast/holt_winters.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <zlib.h>

#include "decide/synthetic_series.h"

namespace aiscale::decide::forecast {
namespace {

using aiscale::testing::Noise;
using aiscale::testing::Sinusoid;

constexpr int kDay = 1440;  // 60 s buckets

// 20/s at night, one-hour ramps to 200/s from 8:00 and back down from 17:00.
double BusinessDay(int t) {
  const double m = t % kDay, lo = 20, hi = 200;
  if (m < 480) return lo;
  if (m < 540) return lo + (hi - lo) * (m - 480) / 60;
  if (m < 1020) return hi;
  if (m < 1080) return hi - (hi - lo) * (m - 1020) / 60;
  return lo;
}

struct Score {
  double mae = 0;       // mean |forecast - truth| over the scored buckets
  double mean = 0;      // mean truth over the scored buckets
  double min_fc = 1e9;  // smallest forecast seen
};

// Trains on buckets [0, train) and, from then on, scores the h-step-ahead forecast of every
// bucket in [train, train + score) against the noiseless truth, still learning as it goes.
Score Replay(const HoltWintersParams& p, const std::function<double(int)>& truth, double noise_sd,
             int train, int score, int h) {
  PersistentState st;
  HoltWinters hw(p, st, "hw.");
  Noise noise(42);
  Score s;
  for (int t = 0; t < train + score; ++t) {
    hw.Observe(t, std::max(0.0, truth(t) + noise_sd * noise.Normal()));
    if (t >= train && t + h < train + score) {
      const double f = hw.Forecast(t + h);
      s.mae += std::abs(f - truth(t + h));
      s.mean += truth(t + h);
      s.min_fc = std::min(s.min_fc, f);
    }
  }
  const int n = score - h;
  s.mae /= n;
  s.mean /= n;
  return s;
}

TEST(HoltWinters, SeasonalForecastErrorAfterTwoSeasonsIsSmall) {
  struct Case {
    std::string name;
    std::function<double(int)> truth;
    double noise_sd;
    int season;               // buckets; 0 = none
    double max_rel_mae;       // bound on the combined forecast's MAE / mean truth, third day
    double seasonless_worse;  // without a season the MAE must be this much worse (0: no check)
  };
  // Noise is Gaussian with the stated sd; the "business day" has one-hour ramps at 8:00 and
  // 17:00 that level+trend can only follow after the fact. At 20% noise, or with the wrong
  // season, the seasonal indices add variance (docs/predictive.md "Limits"); there the
  // combination with level+trend is what keeps the error bounded.
  const std::vector<Case> cases = {
      {"daily sinusoid", [](int t) { return Sinusoid(t, 100, 50, kDay); }, 3, kDay, 0.02, 1.2},
      {"daily sinusoid with trend", [](int t) { return Sinusoid(t, 100, 50, kDay, 0.01); }, 3, kDay,
       0.02, 0},
      {"business day", BusinessDay, 5, kDay, 0.03, 2},
      {"zero at night", [](int t) { return std::max(0.0, Sinusoid(t, 0, 100, kDay)); }, 2, kDay,
       0.035, 1.3},
      {"wrong season (a 2.7-day cycle)", [](int t) { return Sinusoid(t, 100, 50, 2.7 * kDay); }, 3,
       kDay, 0.015, 0},
      {"low rate, 20% noise", [](int t) { return Sinusoid(t, 5, 4, kDay); }, 1, kDay, 0.1, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HoltWintersParams p;
    p.season_buckets = c.season;
    const int h = 10;
    const Score with = Replay(p, c.truth, c.noise_sd, 2 * kDay, kDay, h);
    p.score_horizon = h;
    const Score combined = Replay(p, c.truth, c.noise_sd, 2 * kDay, kDay, h);
    p.score_horizon = 0;
    p.season_buckets = 0;
    const Score without = Replay(p, c.truth, c.noise_sd, 2 * kDay, kDay, h);
    std::cout << "[measured] " << c.name << ": 10-step MAE/mean with season "
              << with.mae / with.mean << ", without " << without.mae / without.mean << ", combined "
              << combined.mae / combined.mean << "\n";
    // The inverse-MSE combination is better than the worse of the two and close to the better
    // (measured: better than both on the sinusoids, 11-13% above seasonal on the business day
    // and zero-at-night, 16-17% above level+trend with the wrong season or 20% noise, where
    // seasonal alone is 65-100% worse).
    EXPECT_LT(combined.mae, std::max(with.mae, without.mae));
    EXPECT_LT(combined.mae, 1.3 * std::min(with.mae, without.mae));
    EXPECT_LT(combined.mae / combined.mean, c.max_rel_mae);
    if (c.seasonless_worse > 0) {
      EXPECT_GT(without.mae, c.seasonless_worse * with.mae);
    }
    EXPECT_GE(with.min_fc, 0.0);
  }
}

TEST(HoltWinters, TracksTrendWithoutSeason) {
  struct Case {
    std::string name;
    double slope;  // per bucket
    double noise_sd;
    double max_mae;  // 10-step ahead
  };
  const std::vector<Case> cases = {
      {"rising ramp", 0.5, 1, 1.5},
      {"falling ramp", -0.05, 0.5, 0.8},
      {"flat", 0, 1, 0.8},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HoltWintersParams p;
    p.season_buckets = 0;
    p.phi = 1;  // undamped so a steady ramp is extrapolated fully
    auto truth = [&](int t) { return 100 + c.slope * t; };
    const Score s = Replay(p, truth, c.noise_sd, 600, 600, 10);
    std::cout << "[measured] " << c.name << ": 10-step MAE " << s.mae << "\n";
    EXPECT_LT(s.mae, c.max_mae);
  }
}

TEST(HoltWinters, ShortHistoryFallsBackToLevelAndTrend) {
  HoltWintersParams p;  // daily season, but only 400 buckets of history
  PersistentState st;
  HoltWinters hw(p, st, "hw.");
  Noise noise(7);
  for (int t = 0; t < 400; ++t) hw.Observe(t, 50 + 0.2 * t + 0.5 * noise.Normal());
  EXPECT_FALSE(hw.seasonal_ready());
  EXPECT_EQ(hw.observed(), 400);
  // Level+trend: the forecast of a rising series is above the last level and near the ramp,
  // better than persistence (the last value).
  const double truth = 50 + 0.2 * 419;
  const double f = hw.Forecast(419);
  EXPECT_GT(f, hw.level());
  EXPECT_LT(std::abs(f - truth), std::abs((50 + 0.2 * 399) - truth));
  // Completing the season switches to seasonal indices.
  for (int t = 400; t < kDay; ++t) hw.Observe(t, 50);
  EXPECT_TRUE(hw.seasonal_ready());
}

TEST(HoltWinters, EdgeCases) {
  struct Case {
    std::string name;
    std::function<void(HoltWinters&)> feed;
    std::function<void(const HoltWinters&)> check;
  };
  const std::vector<Case> cases = {
      {"no data forecasts zero", [](HoltWinters&) {},
       [](const HoltWinters& hw) { EXPECT_EQ(hw.Forecast(10), 0); }},
      {"all zeros forecast zero",
       [](HoltWinters& hw) {
         for (int t = 0; t < 3 * kDay; ++t) hw.Observe(t, 0);
       },
       [](const HoltWinters& hw) {
         EXPECT_TRUE(hw.seasonal_ready());
         EXPECT_EQ(hw.Forecast(3 * kDay + 5), 0);
       }},
      {"stale and NaN input ignored",
       [](HoltWinters& hw) {
         EXPECT_TRUE(hw.Observe(10, 5));
         EXPECT_FALSE(hw.Observe(10, 6));
         EXPECT_FALSE(hw.Observe(9, 6));
         EXPECT_FALSE(hw.Observe(11, std::nan("")));
       },
       [](const HoltWinters& hw) {
         EXPECT_EQ(hw.observed(), 1);
         EXPECT_EQ(hw.last_index(), 10);
       }},
      {"gap is imputed",
       [](HoltWinters& hw) {
         for (int t = 0; t < 100; ++t) hw.Observe(t, 20);
         hw.Observe(150, 20);
       },
       [](const HoltWinters& hw) {
         EXPECT_EQ(hw.observed(), 151);
         EXPECT_NEAR(hw.Forecast(155), 20, 0.5);
       }},
      {"gap longer than a season forgets the trend only",
       [](HoltWinters& hw) {
         for (int t = 0; t < 200; ++t) hw.Observe(t, 10 + t);
         hw.Observe(200 + 2 * kDay, 210);
       },
       [](const HoltWinters& hw) {
         EXPECT_LT(std::abs(hw.trend()), 1.0);
         EXPECT_FALSE(hw.seasonal_ready());
       }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    PersistentState st;
    HoltWinters hw(HoltWintersParams{}, st, "hw.");
    c.feed(hw);
    c.check(hw);
  }
}

TEST(HoltWinters, StateIsBoundedAndResumable) {
  HoltWintersParams p;
  p.long_season_slots = 168;
  p.long_slot_buckets = 60;
  auto truth = [](int t) { return Sinusoid(t, 100, 50, kDay); };
  PersistentState split;
  {
    HoltWinters hw(p, split, "hw.");
    for (int t = 0; t < kDay + 500; ++t) hw.Observe(t, truth(t));
  }
  {
    HoltWinters hw(p, split, "hw.");  // a fresh view over persisted state carries on
    for (int t = kDay + 500; t < 3 * kDay; ++t) hw.Observe(t, truth(t));
  }
  PersistentState whole;
  HoltWinters hw(p, whole, "hw.");
  for (int t = 0; t < 3 * kDay; ++t) hw.Observe(t, truth(t));
  EXPECT_EQ(split, whole);
  EXPECT_EQ(whole.values.at("hw.season").size(), static_cast<size_t>(kDay));
  EXPECT_EQ(whole.values.at("hw.long_season").size(), 168u);
  EXPECT_EQ(whole.values.size(), 4u);  // scalars, season, long season, pending scores

  // A different season length restarts the seasonal part, keeping the level.
  p.season_buckets = 720;
  HoltWinters changed(p, whole, "hw.");
  EXPECT_FALSE(changed.seasonal_ready());
  EXPECT_GT(changed.level(), 0);
}

TEST(HoltWinters, LongSeasonLearnsAWeekend) {
  // Weekdays peak at 150, weekends at 60% of that: a daily season alone averages the two.
  auto truth = [](int t) {
    const int day = (t / kDay) % 7;
    return (day >= 5 ? 0.6 : 1.0) * Sinusoid(t, 100, 50, kDay);
  };
  HoltWintersParams p;
  const int week = 7 * kDay;
  const Score daily = Replay(p, truth, 2, 3 * week, week, 10);
  p.long_season_slots = 168;
  p.long_slot_buckets = 60;
  const Score weekly = Replay(p, truth, 2, 3 * week, week, 10);
  std::cout << "[measured] weekly cycle: 10-step MAE/mean daily only " << daily.mae / daily.mean
            << ", daily+weekly " << weekly.mae / weekly.mean << "\n";
  EXPECT_LT(weekly.mae, daily.mae);
}

// Days since 1970-01-01 of a civil date (the well-known days-from-civil formula).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

// Requests per 60 s bucket of the Alibaba GenAI LoRA trace (23 days, daily cycle, ~1/min).
std::vector<double> AlibabaGenaiPerMinute() {
  const std::string path =
      std::string(AISCALE_SHARED_DIR) + "/traces/alibaba_genai_v2026/lora_request_trace.csv.gz";
  std::vector<double> counts;
  gzFile f = gzopen(path.c_str(), "r");
  if (!f) return counts;
  char line[4096];
  int64_t t0 = -1;
  gzgets(f, line, sizeof line);  // header
  while (gzgets(f, line, sizeof line)) {
    int y, mo, d, h, mi, sec;
    if (std::sscanf(line, "%d-%d-%d %d:%d:%d", &y, &mo, &d, &h, &mi, &sec) != 6) continue;
    const int64_t t = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    if (t0 < 0) t0 = t - t % 86400;
    const size_t b = static_cast<size_t>((t - t0) / 60);
    if (b >= counts.size()) counts.resize(b + 1, 0);
    counts[b] += 1;
  }
  gzclose(f);
  return counts;
}

TEST(HoltWinters, BeatsNaiveForecastsOnARealDailyTrace) {
  const std::vector<double> counts = AlibabaGenaiPerMinute();
  if (counts.empty()) GTEST_SKIP() << "alibaba_genai_v2026 trace not found";
  const int h = 10;  // a 10-minute lead at 60 s buckets
  HoltWintersParams p;
  p.score_horizon = h;
  PersistentState st;
  HoltWinters hw(p, st, "hw.");
  double err = 0, err_persist = 0, err_yesterday = 0, total = 0;
  for (size_t t = 0; t + h < counts.size(); ++t) {
    hw.Observe(static_cast<int64_t>(t), counts[t]);
    if (t < 5 * static_cast<size_t>(kDay)) continue;  // traffic is low before day 4
    const double truth = counts[t + h];
    err += std::abs(hw.Forecast(static_cast<int64_t>(t + h)) - truth);
    err_persist += std::abs(counts[t] - truth);
    err_yesterday += std::abs(counts[t + h - kDay] - truth);
    total += truth;
  }
  std::cout << "[measured] alibaba_genai 10-min-ahead MAE/mean: holt-winters " << err / total
            << ", persistence " << err_persist / total << ", same minute yesterday "
            << err_yesterday / total << "\n";
  EXPECT_LT(err, 0.95 * err_persist);
  EXPECT_LT(err, 0.8 * err_yesterday);
}

}  // namespace
}  // namespace aiscale::decide::forecast
