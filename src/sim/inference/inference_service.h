// InferenceService: a simulated model-serving deployment replaying a request trace, the
// SimWorkload (sim/sim_workload.h) that the runner, SimSource and SimActuator talk to.
//
// Engine side: current = replicas not being removed; ready = those serving. Apply(n) adds
// replicas that serve after provisioning + model load (cold start), or removes the newest
// still-starting ones first, then the least loaded ready ones, which drain (billed until
// their last request finishes). Metrics side (per ServingEngine, over the metrics window,
// stamped with the time asked): request_rate, queue_len, tokens_per_s, latency_p99_s and
// ttft_p99_s for the service (the p99s only when something completed in the window);
// concurrency and kv_cache_usage per ready replica ("replica-K"); gpu_util per GPU of each
// ready replica ("replica-K/gpuJ", busy time since the previous scrape, 0-100).
// The model advances lazily to the event queue's time whenever it is looked at, and on a
// coarse periodic event, so every Controller tick sees the exact state at its own time.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "sim/inference/inference_spec.h"
#include "sim/inference/oracle.h"
#include "sim/inference/serving_engine.h"
#include "sim/sim_workload.h"
#include "sim/workload_env.h"

namespace aiscale::sim::inference {

class InferenceService final : public SimWorkload {
 public:
  InferenceService(std::shared_ptr<const InferenceSpec> spec, WorkloadEnv env);
  ~InferenceService() override;

  const WorkloadRef& ref() const override { return ref_; }
  void Start(EventQueue& q) override;
  void SetInitialReplicas(int n) override { env_.initial_replicas = n; }
  bool Done() const override;
  Result<ScaleState> Observe() override;
  Status Apply(int desired) override;
  // With `service.warm`: wakes asleep replicas before it starts cold ones, puts surplus awake
  // ones to sleep before it removes them, and starts new warm-tier replicas cold (they sleep
  // once loaded). Without it, only asleep == 0 is accepted.
  Status ApplyTiers(int awake, int asleep) override;
  std::vector<Observation> Signal(std::string_view name, TimePoint now) override;
  report::WorkloadSummary Summary() const override;
  report::TimelinePoint TimelinePoint(TimePoint now) const override;
  double ColdStartSeconds() const override { return spec_->ColdStartSeconds(); }
  double Progress() const override { return -1; }
  int GpusPerReplica() const override { return spec_->engine.model.gpus_per_replica; }
  // "static-peak": the oracle's peak-interval size (oracle.h); nullopt for other names.
  std::optional<int> BaselineReplicas(std::string_view baseline) const override;

  // The oracle and static-peak size for this service's trace (computed once, on first use).
  const Result<OracleResult>& Oracle() const;
  const ServingEngine& engine() const { return *engine_; }
  // Advances the model to `t` (tests, bench); the queue's time is used otherwise.
  void SyncTo(TimePoint t) const;

 private:
  struct Replay;  // the open trace stream and its read-ahead buffer
  void Sync() const { SyncTo(q_ ? q_->Now() : start_); }
  int64_t ToEngine(TimePoint t) const { return (t - start_).count(); }
  void Tick();

  std::shared_ptr<const InferenceSpec> spec_;
  WorkloadEnv env_;
  WorkloadRef ref_;
  EventQueue* q_ = nullptr;
  TimePoint start_{};
  std::unique_ptr<ServingEngine> engine_;
  std::unique_ptr<Replay> replay_;
  // Awake replicas (starting, waking, ready) in the order to release them: starting ones first,
  // newest first, then the least loaded ready ones.
  std::vector<int> ReleaseOrder() const;
  // Sorts the warm tier by how soon each would serve if woken (going to sleep: at once; asleep:
  // the wake time; still loading: the rest of its cold start, the older first). Waking takes
  // from the front, dropping a surplus from the back.
  void SortWarmTier();
  double GpuHoursPriced() const;  // awake + asleep x the warm tier's cost fraction

  std::vector<int> active_;  // replica ids not being removed, oldest first
  std::vector<int> asleep_;  // the warm tier: asleep, going to sleep, or loading to sleep
  int scale_events_ = 0;
  mutable std::shared_ptr<const Result<OracleResult>> oracle_;
  mutable int64_t last_point_ns_ = -1;  // engine time of the previous TimelinePoint
};

// The workload factory's builder for kind InferenceService (body field `service`): parses
// the spec and reads the whole trace once, so a malformed row is a config error at the
// trace's `path` (with the trace's own file:line:field) before any run starts. Null on error.
std::unique_ptr<SimWorkload> BuildInferenceService(const config::ConfigNode& workload,
                                                   const WorkloadEnv& env);

}  // namespace aiscale::sim::inference
