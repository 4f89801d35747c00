#include "control/live_board.h"

namespace aiscale::control {

void LiveBoard::Publish(std::vector<WorkloadView> views) {
  std::lock_guard<std::mutex> lock(mu_);
  views_ = std::move(views);
  ready_ = true;
}

std::vector<WorkloadView> LiveBoard::Workloads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return views_;
}

std::optional<WorkloadView> LiveBoard::Workload(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const WorkloadView& v : views_) {
    if (v.ref.Key() == key || v.ref.name == key) return v;
  }
  return std::nullopt;
}

void LiveBoard::PublishPool(PoolView pool) {
  std::lock_guard<std::mutex> lock(mu_);
  pool_ = std::move(pool);
}

std::optional<PoolView> LiveBoard::Pool() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_;
}

bool LiveBoard::Ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_;
}

}  // namespace aiscale::control
