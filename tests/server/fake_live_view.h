// FakeLiveView: a LiveView the test sets by hand (what the daemon's view would hold after a
// tick), plus builders for workloads and decisions with every field the API shows.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/workload_view.h"

namespace aiscale::testing {

class FakeLiveView final : public LiveView {
 public:
  void Set(std::vector<WorkloadView> workloads) {
    std::lock_guard<std::mutex> lock(mu_);
    workloads_ = std::move(workloads);
  }
  void SetReady(bool ready) {
    std::lock_guard<std::mutex> lock(mu_);
    ready_ = ready;
  }
  std::vector<WorkloadView> Workloads() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return workloads_;
  }
  std::optional<WorkloadView> Workload(const std::string& key) const override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const WorkloadView& w : workloads_) {
      if (w.ref.Key() == key) return w;
    }
    return std::nullopt;
  }
  bool Ready() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return ready_;
  }
  void SetPool(std::optional<PoolView> pool) {
    std::lock_guard<std::mutex> lock(mu_);
    pool_ = std::move(pool);
  }
  std::optional<PoolView> Pool() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return pool_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<WorkloadView> workloads_;
  bool ready_ = false;
  std::optional<PoolView> pool_;
};

// A decision of an HPA-driven inference service at t_s seconds, `seq` making it distinct:
// recommended 4 + seq, one signal ok and one stale.
inline Decision ApiDecision(const std::string& key, double t_s, int seq) {
  Decision d;
  d.workload = key;
  d.policy = "hpa";
  d.at = AtSeconds(t_s);
  d.wall = WallTime(Seconds(1'790'000'000 + t_s));  // 2026-09-21T14:13:20Z + t_s
  d.current = 3;
  d.ready = 3;
  d.inputs = {{"concurrency", SignalStatus::kOk, 30.0 + seq, 90.0 + 3 * seq, 3, ""},
              {"kv_cache_usage", SignalStatus::kStale, 0, 0, 0, "all 3 values older than 45 s"}};
  d.recommendation = {4 + seq,
                      true,
                      "hpa_ratio",
                      "concurrency " + std::to_string(30 + seq) + " per replica over target 24",
                      {{"ratio", 1.25}, {"target", 24}}};
  d.stabilized = 4 + seq;
  d.stabilize_reason = "scale-up window max";
  d.constrained = 4 + seq;
  d.constrain_reason = "";
  d.action = Action::kScaled;
  d.action_detail = "3 -> " + std::to_string(4 + seq);
  return d;
}

inline WorkloadView ApiWorkload(const std::string& ns, const std::string& name, int scale) {
  WorkloadView w;
  w.ref = {"InferenceService", ns, name};
  w.policy = "hpa";
  w.engine = "kubernetes";
  w.current = scale;
  w.ready = scale;
  w.desired = scale;
  Decision d = ApiDecision(w.ref.Key(), 60, 0);
  d.current = scale;
  w.last = d;
  w.signals = {{"concurrency", "prometheus", SignalStatus::kOk, 30, 90, 3, 4.5, ""},
               {"kv_cache_usage", "prometheus", SignalStatus::kStale, 0, 0, 0, -1,
                "all 3 values older than 45 s"}};
  return w;
}

}  // namespace aiscale::testing
