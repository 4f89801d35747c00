#include "control/pool_loans.h"

#include <algorithm>

namespace aiscale::control {

void PoolLoans::Open(const std::string& workload, double t_s) { open_.emplace(workload, t_s); }

void PoolLoans::Close(const std::string& workload, double t_s) {
  auto it = open_.find(workload);
  if (it == open_.end()) return;
  closed_.push_back(std::max(0.0, t_s - it->second));
  last_close_s_ = t_s;
  if (closed_.size() > kKept) closed_.pop_front();
  open_.erase(it);
}

void PoolLoans::Drop(const std::string& workload) { open_.erase(workload); }

bool PoolLoans::IsOpen(const std::string& workload) const { return open_.count(workload) > 0; }

std::optional<double> PoolLoans::Expected(double now_s) const {
  if (closed_.empty()) return std::nullopt;
  double sum = 0;
  for (double s : closed_) sum += s;
  const double mean = sum / static_cast<double>(closed_.size());
  double n = static_cast<double>(closed_.size());
  auto outlived = [&](double since) {
    const double age = now_s - since;
    if (age > mean) {
      sum += age;
      n += 1;
    }
  };
  for (const auto& [name, since] : open_) outlived(since);
  // With no loan open nothing else would ever raise a short figure: the time since the last
  // loan ended stands in for one.
  if (open_.empty()) outlived(last_close_s_);
  return sum / n;
}

}  // namespace aiscale::control
