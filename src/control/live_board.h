// LiveBoard: the daemon's LiveView. The Controller publishes a copy of every workload's view
// after each tick; the HTTP server reads copies. Each view also carries the workload's recent
// scale history (the ticks where desired or ready changed, at most kHistoryPoints, plus the
// latest), kept here across publishes so the dashboard can draw a sparkline without reading the
// Store. Thread-safe: one mutex, held only to swap or copy the views.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/workload_view.h"

namespace aiscale::control {

class LiveBoard final : public LiveView {
 public:
  static constexpr size_t kHistoryPoints = 64;

  // Replaces every view (their `history` is ignored and rebuilt from the previous publish and
  // this one); the first call makes the board Ready().
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

// Appends `p` to `h`: a point equal in desired and ready to the last one only moves the
// latest tick forward, so `h` holds changes; the oldest go past `limit`.
void AppendScalePoint(std::vector<ScalePoint>& h, const ScalePoint& p, size_t limit);

}  // namespace aiscale::control
