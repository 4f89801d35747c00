#include "decide/forecast/holt_winters.h"

#include <algorithm>
#include <cmath>

#include "decide/forecast/floor_mod.h"

namespace aiscale::decide::forecast {
namespace {

constexpr size_t kLevel = 0, kTrend = 1, kObserved = 2, kLast = 3, kFill = 4, kShadowLevel = 5,
                 kShadowTrend = 6, kMseSeasonal = 7, kMseShadow = 8, kScored = 9, kScalars = 10;
// Scored forecasts before the weights are used; until then both models count equally.
constexpr double kMinScored = 30;

double Damped(double phi, int64_t h) {
  return phi >= 1.0 ? static_cast<double>(h)
                    : phi * (1 - std::pow(phi, static_cast<double>(h))) / (1 - phi);
}

}  // namespace

HoltWinters::HoltWinters(const HoltWintersParams& params, PersistentState& state,
                         const std::string& prefix)
    : p_(params),
      scalars_(state.Vec(prefix + "scalars")),
      season_(state.Vec(prefix + "season")),
      long_season_(state.Vec(prefix + "long_season")),
      pending_(state.Vec(prefix + "pending")) {
  p_.season_buckets = std::clamp(p_.season_buckets, 0, kMaxSeasonBuckets);
  p_.long_season_slots = std::max(0, p_.long_season_slots);
  p_.long_slot_buckets = std::max(1, p_.long_slot_buckets);
  p_.score_horizon = std::max(0, p_.score_horizon);
  // Restored state is input: a value no Update could have written (not finite, an index past
  // 2^53) starts the model over; a NaN index once kept the gap fill looping for good.
  constexpr double kMaxIndex = 9007199254740992.0;  // 2^53
  const auto sane = [&](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (scalars_.size() != kScalars || !sane(scalars_) || std::abs(scalars_[kLast]) > kMaxIndex ||
      scalars_[kObserved] < 0 || scalars_[kObserved] > kMaxIndex) {
    scalars_.assign({0, 0, 0, -1, 0, 0, 0, 0, 0, 0});
  }
  if (!sane(season_)) season_.clear();
  if (!sane(long_season_)) long_season_.clear();
  const size_t pending = p_.score_horizon > 0 ? 3 * static_cast<size_t>(p_.score_horizon + 1) : 0;
  if (pending_.size() != pending) {
    pending_.assign(pending, -1.0);
    scalars_[kScored] = 0;
  }
  // A changed season length invalidates the indices learned for the old one (not the level).
  if (season_.size() != static_cast<size_t>(p_.season_buckets)) {
    season_.assign(static_cast<size_t>(p_.season_buckets), 0.0);
    scalars_[kFill] = 0;
  }
  if (long_season_.size() != static_cast<size_t>(p_.long_season_slots)) {
    long_season_.assign(static_cast<size_t>(p_.long_season_slots), 0.0);
  }
}

int64_t HoltWinters::observed() const { return static_cast<int64_t>(scalars_[kObserved]); }
int64_t HoltWinters::last_index() const { return static_cast<int64_t>(scalars_[kLast]); }
double HoltWinters::level() const { return scalars_[kLevel]; }
double HoltWinters::trend() const { return scalars_[kTrend]; }
bool HoltWinters::seasonal_ready() const {
  return p_.season_buckets > 0 && scalars_[kFill] >= p_.season_buckets;
}

double HoltWinters::Seasonal(int64_t index) const {
  if (!seasonal_ready()) return 0;
  return season_[static_cast<size_t>(FloorMod(index, p_.season_buckets))];
}

double HoltWinters::LongSeasonal(int64_t index) const {
  if (p_.long_season_slots == 0 || !seasonal_ready()) return 0;
  return long_season_[static_cast<size_t>(
      FloorMod(index / p_.long_slot_buckets, p_.long_season_slots))];
}

bool HoltWinters::Observe(int64_t index, double y) {
  if (!std::isfinite(y)) return false;
  if (observed() > 0 && index <= last_index()) return false;
  if (observed() > 0) {
    const int64_t max_impute = p_.season_buckets > 0 ? p_.season_buckets : 1440;
    // Compared without subtracting the stored index, which no overflow may turn negative.
    if (last_index() < index - max_impute - 1) {
      // Too long to replay: keep what was learned about shape and level, drop the trend, and
      // restart a warm-up that had not finished (its slots would no longer be contiguous).
      scalars_[kTrend] = 0;
      scalars_[kShadowTrend] = 0;
      if (!seasonal_ready()) scalars_[kFill] = 0;
    } else {
      for (int64_t i = last_index() + 1; i < index; ++i) Update(i, Forecast(i), false);
    }
  }
  Update(index, y, true);
  return true;
}

void HoltWinters::Score(int64_t index, double y) {
  const size_t slot =
      static_cast<size_t>(FloorMod(index, static_cast<int64_t>(p_.score_horizon + 1)));
  if (pending_[3 * slot] != static_cast<double>(index)) return;
  const double es = y - pending_[3 * slot + 1], eh = y - pending_[3 * slot + 2];
  double& ms = scalars_[kMseSeasonal];
  double& mh = scalars_[kMseShadow];
  if (scalars_[kScored] == 0) {
    ms = es * es;
    mh = eh * eh;
  } else {
    ms += p_.score_decay * (es * es - ms);
    mh += p_.score_decay * (eh * eh - mh);
  }
  scalars_[kScored] += 1;
}

void HoltWinters::Update(int64_t index, double y, bool real) {
  if (real && p_.score_horizon > 0 && seasonal_ready()) Score(index, y);
  if (p_.score_horizon > 0) {
    // The shadow: Holt's linear method on the raw series, always.
    double& sl = scalars_[kShadowLevel];
    double& sb = scalars_[kShadowTrend];
    if (scalars_[kObserved] == 0) {
      sl = y;
      sb = 0;
    } else {
      const double prev = sl;
      sl = p_.alpha * y + (1 - p_.alpha) * (sl + p_.phi * sb);
      sb = p_.beta * (sl - prev) + (1 - p_.beta) * p_.phi * sb;
    }
  }
  double& l = scalars_[kLevel];
  double& b = scalars_[kTrend];
  const size_t slot =
      p_.season_buckets > 0 ? static_cast<size_t>(FloorMod(index, p_.season_buckets)) : 0;
  if (scalars_[kObserved] == 0) {
    l = y;
    b = 0;
  } else if (!seasonal_ready()) {
    // Holt's linear method while the season is unknown.
    const double prev = l;
    l = p_.alpha * y + (1 - p_.alpha) * (l + p_.phi * b);
    b = p_.beta * (l - prev) + (1 - p_.beta) * p_.phi * b;
  } else {
    const double s = season_[slot];
    const double w = LongSeasonal(index);
    const double prev = l;
    l = p_.alpha * (y - s - w) + (1 - p_.alpha) * (l + p_.phi * b);
    b = p_.beta * (l - prev) + (1 - p_.beta) * p_.phi * b;
    // Each slot within the kernel moves toward this bucket's deseasonalized value; weights sum
    // to one, so every slot still moves by about gamma per season.
    const double target = y - l - w;
    const std::vector<double>& k = KernelWeights();
    const int half = static_cast<int>(k.size() / 2);
    for (int d = -half; d <= half; ++d) {
      double& sd = season_[static_cast<size_t>(FloorMod(index + d, p_.season_buckets))];
      sd += p_.gamma * k[static_cast<size_t>(d + half)] * (target - sd);
    }
    if (p_.long_season_slots > 0) {
      // Each long slot is visited long_slot_buckets times per long season; share omega.
      const size_t ws =
          static_cast<size_t>(FloorMod(index / p_.long_slot_buckets, p_.long_season_slots));
      long_season_[ws] += p_.omega / p_.long_slot_buckets * (y - l - s - w);
    }
  }
  scalars_[kObserved] += 1;
  scalars_[kLast] = static_cast<double>(index);
  if (p_.season_buckets > 0 && !seasonal_ready()) {
    season_[slot] = y;  // raw values until the season is complete
    scalars_[kFill] += 1;
    if (seasonal_ready()) InitSeasonFromWarmup();
  }
  if (p_.score_horizon > 0) {
    const int64_t target = index + p_.score_horizon;
    const size_t slot =
        static_cast<size_t>(FloorMod(target, static_cast<int64_t>(p_.score_horizon + 1)));
    pending_[3 * slot] = static_cast<double>(target);
    pending_[3 * slot + 1] = SeasonalForecast(target);
    pending_[3 * slot + 2] = TrendForecast(target);
  }
}

void HoltWinters::InitSeasonFromWarmup() {
  double mean = 0;
  for (double v : season_) mean += v;
  mean /= static_cast<double>(season_.size());
  // Smooth the single noisy season with the same kernel (circularly) before using it.
  const std::vector<double>& k = KernelWeights();
  const int half = static_cast<int>(k.size() / 2);
  const int64_t m = p_.season_buckets;
  std::vector<double> smooth(season_.size(), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int d = -half; d <= half; ++d) {
      smooth[static_cast<size_t>(i)] +=
          k[static_cast<size_t>(d + half)] * season_[static_cast<size_t>(FloorMod(i + d, m))];
    }
  }
  season_ = std::move(smooth);
  for (double& v : season_) v -= mean;
  // The Holt level tracked the latest part of the cycle; the seasonal indices are relative to
  // the season's mean, so the level restarts there. The trend Holt saw was mostly the cycle.
  scalars_[kLevel] = mean;
  scalars_[kTrend] = 0;
}

const std::vector<double>& HoltWinters::KernelWeights() {
  // Made on first use: most ticks close no bucket and never read it.
  if (kernel_.empty()) kernel_ = Kernel();
  return kernel_;
}

std::vector<double> HoltWinters::Kernel() const {
  // Never wider than an eighth of the season (nor 60 slots), so a short season keeps its shape.
  const int half = std::clamp(p_.season_kernel, 0, std::min(60, p_.season_buckets / 8));
  std::vector<double> k(static_cast<size_t>(2 * half + 1));
  double sum = 0;
  for (int d = -half; d <= half; ++d) {
    k[static_cast<size_t>(d + half)] = half + 1 - std::abs(d);
    sum += half + 1 - std::abs(d);
  }
  for (double& v : k) v /= sum;
  return k;
}

double HoltWinters::SeasonalForecast(int64_t index) const {
  if (observed() == 0) return 0;
  const int64_t h = std::max<int64_t>(1, index - last_index());
  const double f = level() + Damped(p_.phi, h) * trend() + Seasonal(index) + LongSeasonal(index);
  return std::max(0.0, f);
}

double HoltWinters::TrendForecast(int64_t index) const {
  if (observed() == 0) return 0;
  if (p_.score_horizon == 0) return SeasonalForecast(index);
  const int64_t h = std::max<int64_t>(1, index - last_index());
  return std::max(0.0, scalars_[kShadowLevel] + Damped(p_.phi, h) * scalars_[kShadowTrend]);
}

double HoltWinters::seasonal_weight() const {
  if (p_.score_horizon == 0) return 1;
  if (!seasonal_ready()) return 0;
  if (scalars_[kScored] < kMinScored) return 0.5;
  const double ms = scalars_[kMseSeasonal], mh = scalars_[kMseShadow];
  if (ms + mh <= 0) return 0.5;
  return mh / (ms + mh);  // inverse-MSE weights: (1/ms) / (1/ms + 1/mh)
}

double HoltWinters::Forecast(int64_t index) const {
  const double w = seasonal_weight();
  if (w >= 1) return SeasonalForecast(index);
  if (w <= 0) return TrendForecast(index);
  return w * SeasonalForecast(index) + (1 - w) * TrendForecast(index);
}

}  // namespace aiscale::decide::forecast
