#include "sim/demand/guarantee_waits.h"

#include <algorithm>
#include <cmath>

namespace aiscale::sim::demand {
namespace {

// Nearest-rank quantile of a sorted, non-empty list.
double Quantile(const std::vector<double>& sorted, double q) {
  const double rank = std::ceil(q * static_cast<double>(sorted.size()));
  const size_t i = static_cast<size_t>(std::max(1.0, rank)) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

nlohmann::json Stats(std::vector<double> v) {
  if (v.empty()) return {{"max", 0.0}, {"p50", 0.0}, {"p99", 0.0}};
  std::sort(v.begin(), v.end());
  return {{"max", v.back()}, {"p50", Quantile(v, 0.5)}, {"p99", Quantile(v, 0.99)}};
}

nlohmann::json Waits(const std::vector<std::pair<double, double>>& e) {
  std::vector<double> grant, ready;
  for (const auto& [g, r] : e) {
    grant.push_back(g);
    ready.push_back(r);
  }
  return {{"to_grant_s", Stats(std::move(grant))}, {"to_ready_s", Stats(std::move(ready))}};
}

}  // namespace

void GuaranteeWaits::Open(double t_s, bool lent) {
  if (open_at_) return;
  open_at_ = t_s;
  open_lent_ = lent;
}

void GuaranteeWaits::Close(double grant_s, double ready_s) {
  if (!open_at_) return;
  done_.push_back({grant_s - *open_at_, std::max(grant_s, ready_s) - *open_at_, open_lent_});
  open_at_.reset();
}

nlohmann::json GuaranteeWaits::Summary(double end_s) const {
  std::vector<Episode> all = done_;
  if (open_at_) all.push_back({end_s - *open_at_, end_s - *open_at_, open_lent_});
  std::vector<std::pair<double, double>> every, lent;
  for (const Episode& e : all) {
    every.push_back({e.to_grant, e.to_ready});
    if (e.lent) lent.push_back({e.to_grant, e.to_ready});
  }
  return {{"episodes", every.size()},
          {"lent_episodes", lent.size()},
          {"unfinished", open_at_ ? 1 : 0},
          {"all", Waits(every)},
          {"lent", Waits(lent)}};
}

}  // namespace aiscale::sim::demand
