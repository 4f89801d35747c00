// TrainingJob: a simulated elastic data-parallel training job, the engine side of
// docs/training-engine-contract.md.
//
// One replica = one node. Apply(n > current) rents n - current nodes (provisioning delay,
// billed from the request); the job keeps training on its old nodes until all are up, then
// checkpoints, re-rendezvouses and restores on all of them (restart cost, zero throughput,
// every GPU billed). Apply(n < current) releases nodes at once (provisioning ones first) and
// restarts on the rest. A node failure drops current and ready by one, rolls progress back to
// the last periodic checkpoint and restarts on the survivors without a checkpoint save.
// ready = nodes in the running rendezvous; 0 while a restart is under way.
// Readings follow the exporters: per-GPU values (instance "nodeK/gpuJ") for the nodes that
// are up, job values once; each is the average over the last scrape interval (gauges: the
// value at the scrape) stamped with the scrape time, with seeded noise.
// Phases in order: initial load, then epochs of compute with an eval after every
// eval_every_epochs-th epoch and a shard reload before every reload_every_epochs-th epoch.
#pragma once

#include <deque>
#include <set>
#include <vector>

#include "core/signal.h"
#include "sim/cluster.h"
#include "sim/sim_workload.h"
#include "sim/training_model.h"
#include "sim/training_oracle.h"
#include "sim/workload_env.h"

namespace aiscale::sim {

class TrainingJob final : public SimWorkload, public NodeOwner {
 public:
  // `rules`: the sizes and rescale budget the offline oracle in Summary() is held to.
  TrainingJob(TrainingJobConfig cfg, WorkloadEnv env, TrainingOracleSettings rules = {});

  const WorkloadRef& ref() const override { return ref_; }
  void Start(EventQueue& q) override;
  void SetInitialReplicas(int n) override { env_.initial_replicas = n; }
  bool Done() const override { return done_; }
  Result<ScaleState> Observe() override;
  Status Apply(int desired) override;
  std::vector<Observation> Signal(std::string_view name, TimePoint now) override;
  nlohmann::json Summary() const override;
  nlohmann::json TimelinePoint(TimePoint now) const override;
  double ColdStartSeconds() const override;
  double Progress() const override;
  int GpusPerReplica() const override { return gpus_per_node(); }

  void OnNodeUp(int node) override;
  void OnNodeFailed(int node) override;

  // For tests and reports.
  signals::Phase phase() const { return phase_; }
  bool restarting() const { return restarting_; }
  double steps() const;  // optimizer steps done, as of the queue's now
  int running() const { return restarting_ ? 0 : static_cast<int>(running_.size()); }
  const TrainingJobConfig& config() const { return cfg_; }
  // The offline optimum for this job (docs/training-oracle.md), with the failures seen so far.
  Result<TrainingOracleResult> Oracle() const;

 private:
  struct Segment {
    TimePoint t0;
    signals::Phase phase;
    bool restarting;
    int running;
    PhaseRates rates;
    double steps0;
  };
  struct FailureRecord {
    double t_s;
    int node;
    int size_before;
    double recovered_s = -1;  // failure -> size_before nodes ready again; -1 until then
    bool replaced = false;    // false: the job ended (or the run was cut) first
  };
  struct Rescale {
    double t_s;
    int from;
    int to;
    bool replacement = false;  // growth back toward the size a failure took a node from
  };

  TimePoint Now() const { return q_->Now(); }
  int gpus_per_node() const { return env_.cluster->config().gpus_per_node; }
  void Advance();
  void Reconcile(bool lost_member);
  void StartRestart(bool save_checkpoint);
  void OnTimer(uint64_t gen);
  void NextPhase();
  void BeginPhase(signals::Phase p, double total);
  void Finish();
  void UpdateRates();
  void Reschedule();
  void CheckRecovered();
  double ComputeBoundarySteps() const;
  int CompletedEpochs(double steps) const;
  // Average of a per-segment reading over [from, to]; the value at `to` when from == to.
  double Average(TimePoint from, TimePoint to, double PhaseRates::*field) const;
  const Segment& SegmentAt(TimePoint t) const;
  double StepsAt(TimePoint t) const;

  TrainingJobConfig cfg_;
  WorkloadEnv env_;
  TrainingOracleSettings oracle_rules_;
  WorkloadRef ref_;
  EventQueue* q_ = nullptr;

  std::vector<int> nodes_;  // allocated, in allocation order
  std::set<int> running_;   // members of the running (or forming) rendezvous
  bool restarting_ = false;
  TimePoint restart_end_{};
  uint64_t gen_ = 0;
  bool applying_ = false;

  signals::Phase phase_ = signals::Phase::kLoad;
  double phase_total_ = 0;
  double phase_done_ = 0;
  double steps_ = 0;
  double phase_start_steps_ = 0;
  bool done_ = false;
  TimePoint finish_{};
  PhaseRates rates_;
  TimePoint last_advance_{};
  std::deque<Segment> segments_;

  double util_gpu_s_ = 0;  // integral of utilization over up GPUs
  double restart_time_s_ = 0;
  int restarts_ = 0;
  // Trained samples rolled back to the last checkpoint by failures (a size change checkpoints
  // first and loses none).
  double samples_lost_ = 0;
  double phase_time_s_[3] = {0, 0, 0};
  std::vector<Rescale> rescales_;
  std::vector<FailureRecord> failures_;
};

}  // namespace aiscale::sim
