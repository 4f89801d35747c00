#include "decide/forecast/error_quantile.h"

#include <algorithm>
#include <cmath>

#include "decide/forecast/floor_mod.h"

namespace aiscale::decide::forecast {

ErrorQuantile::ErrorQuantile(const ErrorQuantileParams& params, PersistentState& state,
                             const std::string& prefix)
    : p_(params),
      ring_(state.Vec(prefix + "ring")),
      sorted_(state.Vec(prefix + "sorted")),
      meta_(state.Vec(prefix + "meta")),
      pending_(state.Vec(prefix + "pending")) {
  p_.window = std::max<size_t>(1, p_.window);
  p_.pending = std::max<size_t>(1, p_.pending);
  p_.quantile = std::clamp(p_.quantile, 0.0, 1.0);
  // A window that shrank, or state that does not add up, starts over rather than guessing.
  // The head must index the ring (a restored state could hold any number there).
  const bool head_ok = meta_.size() == 1 && meta_[0] >= 0 &&
                       meta_[0] < static_cast<double>(p_.window) &&
                       meta_[0] == std::floor(meta_[0]);
  if (!head_ok || ring_.size() > p_.window || sorted_.size() != ring_.size()) {
    ring_.clear();
    sorted_.clear();
    meta_.assign({0});
  }
  if (pending_.size() != 2 * p_.pending) {
    pending_.assign(2 * p_.pending, 0.0);
    for (size_t i = 0; i < p_.pending; ++i) pending_[2 * i] = -1;  // no target
  }
}

size_t ErrorQuantile::count() const { return ring_.size(); }

void ErrorQuantile::RecordForecast(int64_t target, double forecast) {
  if (!std::isfinite(forecast)) return;
  const size_t slot = static_cast<size_t>(FloorMod(target, static_cast<int64_t>(p_.pending)));
  pending_[2 * slot] = static_cast<double>(target);
  pending_[2 * slot + 1] = forecast;
}

bool ErrorQuantile::RecordActual(int64_t index, double actual) {
  if (!std::isfinite(actual)) return false;
  const size_t slot = static_cast<size_t>(FloorMod(index, static_cast<int64_t>(p_.pending)));
  if (pending_[2 * slot] != static_cast<double>(index)) return false;
  const double f = pending_[2 * slot + 1];
  pending_[2 * slot] = -1;
  const double miss = actual - f;
  AddError(p_.mode == ErrorMode::kRelative ? miss / std::max(f, p_.relative_floor) : miss);
  return true;
}

void ErrorQuantile::AddError(double error) {
  if (!std::isfinite(error)) return;
  if (ring_.size() < p_.window) {
    ring_.push_back(error);
  } else {
    const size_t head = static_cast<size_t>(meta_[0]);
    const double old = ring_[head];
    ring_[head] = error;
    meta_[0] = static_cast<double>((head + 1) % p_.window);
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), old);
    if (it != sorted_.end() && *it == old) {
      sorted_.erase(it);
    } else {  // a restored state whose two copies disagree: rebuild the sorted one
      sorted_.assign(ring_.begin(), ring_.end());
      sorted_.erase(std::find(sorted_.begin(), sorted_.end(), error));
      std::sort(sorted_.begin(), sorted_.end());
    }
  }
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), error), error);
}

double ErrorQuantile::Quantile() const {
  if (sorted_.empty()) return 0;
  const double pos = p_.quantile * static_cast<double>(sorted_.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted_.size() - 1);
  return sorted_[lo] + (pos - static_cast<double>(lo)) * (sorted_[hi] - sorted_[lo]);
}

double ErrorQuantile::Margin(double f) const {
  const double q = std::max(0.0, Quantile());
  return p_.mode == ErrorMode::kRelative ? q * std::max(0.0, f) : q;
}

}  // namespace aiscale::decide::forecast
