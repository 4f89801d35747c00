#include "decide/serving/demand_forecast.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "decide/text.h"

namespace aiscale::decide::serving {
namespace {

forecast::HoltWintersParams Seasonal(const DemandForecastParams& p) {
  forecast::HoltWintersParams s = p.smoothing;
  s.season_buckets = p.season_s > 0 ? static_cast<int>(std::lround(p.season_s / p.bucket_s)) : 0;
  s.score_horizon = 1;
  return s;
}

double Median3(double a, double b, double c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

}  // namespace

DemandForecast::DemandForecast(const DemandForecastParams& p, PersistentState& state,
                               std::string_view prefix)
    : p_(p), state_(state) {
  p_.smoothing = Seasonal(p);
  last3_key_ = StrCat(prefix, "last3");
  holt_key_ = StrCat(prefix, "holt");
  mean_key_ = StrCat(prefix, "mean");
  raw_key_ = StrCat(prefix, "raw");
  recent_key_ = StrCat(prefix, "recent");
  agg_key_ = StrCat(prefix, "agg");
  hw_prefix_ = StrCat(prefix, "hw.");
}

double DemandForecast::Observe(double demand, double now_s) {
  std::vector<double>& last = state_.Vec(last3_key_);
  if (last.size() != 3) last.assign(3, demand);
  last = {last[1], last[2], demand};
  const double y = Median3(last[0], last[1], last[2]);

  // Holt's linear method at the tick's own spacing: [level, trend per s, last time].
  std::vector<double>& h = state_.Vec(holt_key_);
  if (h.size() != 3) h = {y, 0, now_s};
  const double dt = std::clamp(now_s - h[2], 0.0, 3600.0);
  std::vector<double>& mean = state_.Vec(mean_key_);
  if (mean.size() != 1) mean.assign(1, demand);
  mean[0] += (1 - std::exp(-dt / p_.mean_s)) * (demand - mean[0]);
  if (dt > 0) {
    const double a = 1 - std::exp(-dt / p_.level_s), b = 1 - std::exp(-dt / p_.trend_s);
    const double predicted = h[0] + h[1] * dt;
    const double level = predicted + a * (y - predicted);
    h[1] += b * ((level - h[0]) / dt - h[1]);
    h[0] = level;
    h[2] = now_s;
  }

  // The measured demand per tick over the absorption window, and its mean per tick over the
  // peak window: [time, value] pairs, oldest first.
  // [time, value] pairs: a restored vector of odd length is not one, so start it over.
  std::vector<double>& raw = state_.Vec(raw_key_);
  if (raw.size() % 2 != 0) raw.clear();
  raw.insert(raw.end(), {now_s, demand});
  size_t gone = 0;
  while (gone + 2 < raw.size() && raw[gone] <= now_s - p_.absorb_s) gone += 2;
  raw.erase(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(gone));
  // A mean of shares: a sum of huge (finite) readings would overflow to infinity.
  const double n = static_cast<double>(raw.size() / 2);
  double absorbed = 0;
  for (size_t i = 1; i < raw.size(); i += 2) absorbed += raw[i] / n;
  std::vector<double>& recent = state_.Vec(recent_key_);
  if (recent.size() % 2 != 0) recent.clear();
  recent.insert(recent.end(), {now_s, absorbed});
  size_t expired = 0;
  while (expired + 2 < recent.size() && recent[expired] < now_s - p_.peak_window_s) expired += 2;
  recent.erase(recent.begin(), recent.begin() + static_cast<std::ptrdiff_t>(expired));

  // The seasonal model, on bucket means: [open bucket, sum, count].
  if (p_.season_s > 0) {
    const auto bucket = static_cast<int64_t>(std::floor(now_s / p_.bucket_s));
    std::vector<double>& agg = state_.Vec(agg_key_);
    if (agg.size() != 3) agg = {static_cast<double>(bucket), 0, 0};
    if (bucket > static_cast<int64_t>(agg[0])) {
      forecast::HoltWinters hw(p_.smoothing, state_, hw_prefix_);
      if (agg[2] > 0) hw.Observe(static_cast<int64_t>(agg[0]), agg[1] / agg[2]);
      agg = {static_cast<double>(bucket), 0, 0};
    }
    agg[1] += y;
    agg[2] += 1;
  }
  return absorbed;
}

double DemandForecast::Recurring(double horizon_s, int k, double now_s) const {
  const std::vector<double>* recent = state_.FindVec(recent_key_);
  if (!recent || k < 1) return 0;
  // The k largest, kept sorted descending in a small array (k is 1 to a few).
  double top[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  k = std::min(k, 8);
  for (size_t i = 0; i + 1 < recent->size(); i += 2) {
    if ((*recent)[i] < now_s - horizon_s) continue;
    double v = (*recent)[i + 1];
    for (int j = 0; j < k; ++j) {
      if (v > top[j]) std::swap(v, top[j]);
    }
  }
  return top[k - 1];
}

double DemandForecast::level() const { return state_.Get(holt_key_, 0); }

double DemandForecast::mean() const { return state_.Get(mean_key_, 0); }

double DemandForecast::trend_per_s() const {
  const std::vector<double>* h = state_.FindVec(holt_key_);
  return h && h->size() == 3 ? (*h)[1] : 0;
}

bool DemandForecast::seasonal() {
  if (p_.season_s <= 0 || !state_.FindVec(hw_prefix_ + "scalars")) return false;
  return forecast::HoltWinters(p_.smoothing, state_, hw_prefix_).seasonal_ready();
}

double DemandForecast::Forecast(double horizon_s, double now_s) {
  double f = std::max(0.0, level() + std::max(0.0, trend_per_s()) * horizon_s);
  if (seasonal()) {
    forecast::HoltWinters hw(p_.smoothing, state_, hw_prefix_);
    const auto at = [&](double s) { return static_cast<int64_t>(std::floor(s / p_.bucket_s)); };
    const int64_t lo = std::max(hw.last_index() + 1, at(now_s));
    const int64_t hi = std::min(std::max(lo, at(now_s + horizon_s)), lo + 64);
    f = 0;
    for (int64_t j = lo; j <= hi; ++j) f = std::max(f, hw.Forecast(j));
  }
  return std::max(f, Peak(horizon_s, now_s));
}

}  // namespace aiscale::decide::serving
