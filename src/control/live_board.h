// LiveBoard: the daemon's LiveView. The Controller publishes a copy of every workload's view
// after each tick; the HTTP server reads copies. Thread-safe: one mutex, held only to swap or
// copy the views.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/workload_view.h"

namespace aiscale::control {

class LiveBoard final : public LiveView {
 public:
  // Replaces every view; the first call makes the board Ready().
  void Publish(std::vector<WorkloadView> views);
  std::vector<WorkloadView> Workloads() const override;
  std::optional<WorkloadView> Workload(const std::string& key) const override;
  bool Ready() const override;
  void PublishPool(PoolView pool);
  std::optional<PoolView> Pool() const override;

 private:
  mutable std::mutex mu_;
  std::vector<WorkloadView> views_;
  std::optional<PoolView> pool_;
  bool ready_ = false;
};

}  // namespace aiscale::control
