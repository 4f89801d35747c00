// GpuDemand: a tenant of a shared GPU pool whose jobs ask for GPUs along a demand curve (a
// Helios virtual cluster's running + pending GPUs), the SimWorkload for `kind: GpuDemand`.
//
// Engine side: one replica is one GPU. Apply(n) grows by GPUs that work restart_s later (the
// job on them starting, or resuming from its checkpoint) and shrinks at once, newest GPUs first.
// A shrink below the demand preempts the jobs on those GPUs: each such GPU is a reclaimed GPU,
// and costs restart_s of its work (the job checkpoints as it stops -- the pre-stop contract --
// and pays its restart when it resumes), the reclaim cost in GPU-minutes. Metrics side: the
// curve's value at the last scrape (signal `gpu_demand` unless renamed), as a queue-length
// exporter would report it, so a real policy (hpa on an External metric) follows it.
// KindFigures: GPU-minutes demanded, held, pending (demand not held), starting (held, not yet
// working), reclaimed GPUs and their cost, and the guarantee waits (guarantee_waits.h) when
// the run gives the tenant's guarantee. In a run with free restarts (WorkloadEnv::free_restarts,
// the free_borrowing comparison) restart_s counts as 0. Single-threaded, like the simulator.
#pragma once

#include <memory>
#include <vector>

#include "sim/demand/gpu_demand_spec.h"
#include "sim/demand/guarantee_waits.h"
#include "sim/sim_workload.h"
#include "sim/workload_env.h"

namespace aiscale::sim::demand {

class GpuDemand final : public SimWorkload {
 public:
  GpuDemand(std::shared_ptr<const GpuDemandSpec> spec, WorkloadEnv env);

  const WorkloadRef& ref() const override { return ref_; }
  void Start(EventQueue& q) override;
  void SetInitialReplicas(int n) override { env_.initial_replicas = n; }
  bool Done() const override;
  Result<ScaleState> Observe() override;
  Status Apply(int desired) override;
  std::vector<Observation> Signal(std::string_view name, TimePoint now) override;
  report::WorkloadSummary Summary() const override;
  report::TimelinePoint TimelinePoint(TimePoint now) const override;
  nlohmann::json KindFigures() const override;
  double ColdStartSeconds() const override { return RestartS(); }
  double Progress() const override;

 private:
  // Integrals up to `accounted_s`, in GPU-seconds.
  struct Ledger {
    double accounted_s = 0;
    size_t point = 0;  // the demand point in force at accounted_s
    double demand = 0, held = 0, pending = 0, ready = 0;
  };
  double NowS() const;
  // The restart paid: restart_s, or none in a run whose restarts are free.
  double RestartS() const { return env_.free_restarts ? 0 : spec_->restart_s; }
  int64_t DemandAt(double t_s) const;  // 0 once the curve is over
  int64_t ReadyCount(double t_s) const;
  int64_t Held() const { return static_cast<int64_t>(ready_at_.size()); }
  int64_t Owed(int64_t demand) const;
  // Accounts up to t_s (at most the curve's end), opening and closing guarantee waits where
  // the demand changes.
  void Advance(double t_s) const;
  double ReadyGpuSeconds(double from, double to) const;
  void CheckGuarantee(double t_s, int64_t demand) const;
  bool PoolShort(int64_t shortfall) const;

  std::shared_ptr<const GpuDemandSpec> spec_;
  WorkloadEnv env_;
  WorkloadRef ref_;
  EventQueue* q_ = nullptr;
  TimePoint start_{};
  std::vector<double> ready_at_;  // per GPU held, ascending: when its job works
  int64_t reclaimed_gpus_ = 0;
  int rescales_ = 0;
  mutable Ledger ledger_;  // advanced lazily by every look at the workload
  mutable GuaranteeWaits waits_;
};

// The workload factory's builder for kind GpuDemand (body field `demand`). Null on error.
std::unique_ptr<SimWorkload> BuildGpuDemand(const config::ConfigNode& workload,
                                            const WorkloadEnv& env);

}  // namespace aiscale::sim::demand
