#include "decide/serving/headroom.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "decide/text.h"

namespace aiscale::decide::serving {
namespace {
// The most buckets a lead is scored over (a 4 h lead at 60 s buckets).
constexpr int64_t kMaxHorizon = 240;
}  // namespace

Headroom::Headroom(const HeadroomParams& p, PersistentState& state, std::string_view prefix)
    : p_(p), state_(state) {
  eq_params_.window = static_cast<size_t>(std::max(1.0, p_.window_s / p_.bucket_s));
  eq_params_.quantile = p_.quantile;
  eq_params_.mode = forecast::ErrorMode::kAbsolute;
  eq_params_.pending = 1;  // scores are added directly (AddError)
  prefix_ = StrCat(prefix, "err.");
  agg_key_ = StrCat(prefix, "bucket");       // [open bucket, its peak]
  peaks_key_ = StrCat(prefix, "peaks");      // per closed bucket, newest last
  first_key_ = StrCat(prefix, "first");      // the first tick's time
  pending_key_ = StrCat(prefix, "pending");  // [target bucket, forecast, scale] per forecast
}

size_t Headroom::scored() const {
  return forecast::ErrorQuantile(eq_params_, state_, prefix_).count();
}

double Headroom::Score() const {
  forecast::ErrorQuantile eq(eq_params_, state_, prefix_);
  const double n = static_cast<double>(eq.count());
  const double learned = std::max(0.0, eq.Quantile());
  return (n * learned + p_.prior_weight * p_.prior) / (n + p_.prior_weight);
}

double Headroom::For(double forecast, double floor) const {
  return Score() * std::sqrt(std::max({forecast, floor, 0.0}));
}

double Headroom::Observe(double demand, double forecast, double lead_s, double floor,
                         double now_s) {
  const auto bucket = static_cast<int64_t>(std::floor(now_s / p_.bucket_s));
  const int64_t h =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(lead_s / p_.bucket_s)), 1, kMaxHorizon);
  if (!state_.FindVec(first_key_)) state_.Set(first_key_, now_s);
  const bool warm = now_s - state_.Get(first_key_, now_s) >= p_.warmup_s;
  std::vector<double>& agg = state_.Vec(agg_key_);
  if (agg.size() == 2 && bucket <= static_cast<int64_t>(agg[0])) {
    agg[1] = std::max(agg[1], demand);
    return For(forecast, floor);
  }
  if (agg.size() == 2) {
    // Close the open bucket; score every forecast whose span ends with it against the most
    // demand seen over the buckets of that span.
    std::vector<double>& peaks = state_.Vec(peaks_key_);
    peaks.push_back(agg[1]);
    if (peaks.size() > static_cast<size_t>(kMaxHorizon)) peaks.erase(peaks.begin());
    std::vector<double>& pending = state_.Vec(pending_key_);
    forecast::ErrorQuantile eq(eq_params_, state_, prefix_);
    std::vector<double> kept;
    for (size_t i = 0; i + 3 <= pending.size(); i += 3) {
      const auto target = static_cast<int64_t>(pending[i]);
      if (target > static_cast<int64_t>(agg[0])) {
        kept.insert(kept.end(), {pending[i], pending[i + 1], pending[i + 2]});
        continue;
      }
      const size_t span = std::min<size_t>(
          peaks.size(), static_cast<size_t>(static_cast<int64_t>(agg[0]) - pending[i + 2] + 1));
      const double actual =
          *std::max_element(peaks.end() - static_cast<std::ptrdiff_t>(span), peaks.end());
      eq.AddError((actual - pending[i + 1]) / std::sqrt(std::max(pending[i + 1], floor)));
    }
    pending.swap(kept);
  }
  agg = {static_cast<double>(bucket), demand};
  if (warm) {
    std::vector<double>& pending = state_.Vec(pending_key_);
    if (pending.size() < 3 * static_cast<size_t>(kMaxHorizon)) {
      pending.insert(pending.end(),
                     {static_cast<double>(bucket + h - 1), forecast, static_cast<double>(bucket)});
    }
  }
  return For(forecast, floor);
}

}  // namespace aiscale::decide::serving
