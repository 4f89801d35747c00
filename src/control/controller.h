// Controller: one tick = for every workload, observe -> recommend -> stabilize -> constrain ->
// act -> record a Decision. Signals come from the Collector's snapshots, so a tick never waits
// on the network for them; Collect() starts the fetches that are due (the daemon calls it from
// its own thread, the simulator as a queue event, tests before each Tick). The engines' calls
// wait at most a deadline, and one hung engine never delays another (ControllerOptions::
// engine_calls, as the daemon runs; inline in the simulator).
//
// Promises: missing, stale or invalid signals, failed or late fetches never lead to a
// scale-down (the Decision says which signal was missing); a workload whose engine reports it
// completed (ScaleState::completed) is neither asked about nor applied to, its Decisions
// saying rule kRuleCompleted; a failed Observe or Apply is
// recorded with its error kind, not thrown, and the next workload still gets its turn. Policy
// and stabilizer state is loaded from the Store when a workload is added and saved after every
// tick, so a restart resumes windows and learned models. Time comes only from the injected
// Clock. Tick and Add are called from one thread; Collect and NextCollect may be called from
// another. The same code runs under the simulator.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "control/collector.h"
#include "control/engine_calls.h"
#include "control/executor.h"
#include "control/live_board.h"
#include "control/pool_loans.h"
#include "control/pool_watch.h"
#include "control/steering_board.h"
#include "control/store_health.h"
#include "core/actuator.h"
#include "core/clock.h"
#include "core/decision.h"
#include "core/metric_source.h"
#include "core/policy.h"
#include "core/pool.h"
#include "core/pool_allocator.h"
#include "core/replica_set.h"
#include "core/scale.h"
#include "core/store.h"
#include "core/telemetry.h"
#include "core/workload_signals.h"

namespace aiscale::control {

struct SignalBinding {
  std::string signal;      // canonical name
  std::string expression;  // passed to the source (PromQL, metric name); may be empty
  MetricSource* source = nullptr;
  Duration interval{};  // zero: ControllerOptions::collect_interval
  Duration timeout{};   // zero: ControllerOptions::fetch_timeout
};

// A workload's place in the shared GPU pool, resolved against the pool's spec (indices, not
// names). `elastic`: the pool may shrink it toward `floor` in group multiples (training);
// `reducible`: it may be reduced toward `floor` for higher priorities or an owner (serving).
// Neither: the pool never shrinks it, and it never borrows.
struct PoolMember {
  int tenant = 0;
  int priority = 0;
  int gpus_per_replica = 1;
  int granularity = 1;
  int floor = 1;
  bool elastic = false;
  bool reducible = false;
  double restart_s = 0;  // its cold start: the least time it stays shrunk
  // A training job: every resize restarts all of it, so after a shrink it grows back in one
  // step (Controller::HoldsForWholeRegrowth). Other elastic workloads add independent units.
  bool regrows_whole = false;
};

struct WorkloadBinding {
  WorkloadRef ref;
  std::vector<SignalBinding> signals;  // must cover Policy::Signals()
  // Immutable and stateless (state lives in PersistentState), so specs share them.
  std::shared_ptr<const Policy> policy;
  std::shared_ptr<const Stabilizer> stabilizer;    // may be null: pass-through
  std::shared_ptr<const Constrainer> constraints;  // may be null: none
  Actuator* actuator = nullptr;
  Duration staleness = Seconds(45);
  size_t history_capacity = 4096;
  // Where the workload's learned state is kept in the Store ("<state_key>/policy"); empty: its
  // key. An AIScaler's is its UID, so an object deleted and created again starts fresh.
  std::string state_key;
  // The spec's bounds, for the API and for clamping an operator's pin (the Constrainer holds
  // its own copy and enforces them on the policy's recommendation).
  int min_replicas = 0;
  int max_replicas = 1 << 30;
  std::optional<PoolMember> pool;  // set when the controller has a pool (SetPool)
  // A person's hold is among `constraints` (an AIScaler's pause or pin annotation): like an
  // operator's pause through the API, the pool neither shrinks nor grows the workload.
  bool held = false;
};

struct ControllerOptions {
  Executor* executor = nullptr;    // null: inline (fetches finish inside Collect)
  Telemetry* telemetry = nullptr;  // null: nothing counted
  LiveBoard* board = nullptr;      // null: no snapshots published for the API
  // Operators' overrides (pause, pin), applied between constrain and act; null: none.
  SteeringBoard* steering = nullptr;
  Duration collect_interval = Seconds(15);
  Duration fetch_timeout = Seconds(5);
  // Stamp each Decision with the clock's wall time. The simulator turns it off: its decision
  // logs carry virtual time only.
  bool stamp_wall_time = true;
  // Decide and record exactly as live, and never call Apply (`aiscale run --dry-run`).
  bool dry_run = false;
  // Where events worth one log line go (the Store failing and resuming); null: nowhere.
  std::function<void(const std::string&)> log;
  // Set: each tick's Observe and Apply calls run on the engines' own threads, concurrently,
  // with a deadline (engine_calls.h), so one slow engine delays no other workload. Unset: each
  // call is made in the tick's thread, in order (the simulator, unit tests).
  std::optional<EngineCallOptions> engine_calls;
};

class Controller {
 public:
  // `store` may be null (nothing persisted). Everything passed must outlive the Controller.
  Controller(Clock& clock, Store* store, ControllerOptions options = {});

  // Puts every workload added later into one shared GPU pool: each tick, after every workload's
  // pipeline has said what it wants, the Allocator (decide/allocator.h) grants sizes that fit
  // the pool, and only then do the engines apply. `source` reports the pool's size (fetched
  // with the signals, off the tick thread) and must outlive the Controller. Call before Add.
  Status SetPool(PoolSpec spec, PoolSource* source, const PoolAllocator* allocator);
  // Fails if the binding lacks a policy, actuator or a source for a signal the policy reads,
  // if the name is taken, if it names a tenant or priority the pool lacks (or has a pool place
  // without a pool), or if stored state cannot be loaded.
  Status Add(WorkloadBinding binding);
  // Run-time changes (AIScalers watched on Kubernetes), made between ticks on the tick thread.
  // Replace swaps the binding of the workload with the same key, checked as Add checks it:
  // with the same state key its stabilizer state stays, and its policy state too unless the
  // policy changed (then it starts empty); another state key loads that key's states. Its
  // signal history and fetches stay when its signals are unchanged. Remove stops managing a
  // workload and leaves its engine as it is, after writing its states to the Store (an error there
  // is returned; the workload is removed all the same); in a pool of a fixed size the GPUs it
  // last held stay counted as held (its replicas still run) until the same key is added again. Both
  // are kNotFound for a key not managed.
  Status Replace(WorkloadBinding binding);
  Status Remove(const std::string& key);
  // A config reload: replaces workload `index`'s policy, stabilizer, constraints, bounds and
  // staleness with `fresh`'s (its signals and actuator must be the same; they are kept). The
  // stabilizer's state is kept; the policy's is reset when the policy changes. Tick's thread.
  Status Reconfigure(size_t index, const WorkloadBinding& fresh);
  // Starts every signal fetch that is due now; returns without waiting (see Collector).
  void Collect();
  // The earliest time Collect has something to start (signals or the pool's size).
  TimePoint NextCollect() const;
  // One pass over all workloads, in the order they were added; what they decided is written
  // to the Store as one batch at the end (one commit per tick).
  std::vector<Decision> Tick();
  // Turns applying off or on at run time (leader election: only the leader applies). While off,
  // a tick decides and records exactly as live, calls no Apply, and its Decisions say action
  // none with `reason` ("not leader (leader: x)"). Checked before each Apply; thread-safe.
  void SetMayApply(bool may_apply, const std::string& reason = "");
  bool may_apply() const { return may_apply_.load(); }
  // Runs one workload's tick and writes it to the Store on its own. In a pool, the pool is
  // allocated by Tick only: this workload may shrink but holds instead of growing.
  Decision TickOne(size_t index);
  // Writes every workload's states to the Store now, whatever its cadence
  // (StoreOptions::state_every_ticks): called on a clean stop so that nothing learned is lost.
  Status FlushStates();
  size_t size() const { return workloads_.size(); }
  const WorkloadBinding& binding(size_t i) const { return workloads_[i]->binding; }
  const WorkloadSignals& signals(size_t i) const { return workloads_[i]->signals; }
  // Whether workload i's engine reported it completed on its last tick.
  bool completed(size_t i) const { return workloads_[i]->completed; }
  const Collector& collector() const { return collector_; }
  const std::optional<PoolSpec>& pool_spec() const { return pool_spec_; }

 private:
  struct Workload {
    WorkloadBinding binding;
    WorkloadSignals signals;
    PersistentState policy_state;
    PersistentState stabilizer_state;
    PersistentState pool_state;  // when the pool last shrank it (regrowth hysteresis)
    std::string key, policy_key, stabilizer_key, pool_key;  // in the Store, built once
    std::optional<int> last_current;  // the engine's size at the last successful Observe
    bool steered = false;             // an operator's pause or pin shaped this tick's decision
    std::optional<int> pool_limit;    // PolicyInput::pool_limit for the next tick
    std::deque<std::pair<double, int>> wants;  // (t_s, want) over the pool's trend window
    int64_t owed_gpus = 0;  // kept for it while it waits to regrow whole (OwedGpus)
    size_t collect_id = 0;
    std::vector<size_t> signal_slots;  // binding.signals[k] -> its slot in `signals`
    bool completed = false;            // the engine said so on the last Observe
    ReplicaSet replicas;               // the engine's, as of this tick's read
    Workload(WorkloadBinding b) : binding(std::move(b)), signals(binding.history_capacity) {}
  };
  // What Add and Replace check: a policy, an actuator, a source for every signal it reads.
  static Status Check(const WorkloadBinding& b, const std::string& key);
  Status CheckPool(const WorkloadBinding& b, const std::string& key) const;  // SetPool's rules
  size_t IndexOf(const std::string& key) const;  // workloads_.size() when not managed
  Status LoadStates(Workload& w) const;
  void StartCollecting(Workload& w);
  // Observe, signals, recommend, stabilize, constrain: `d.constrained` is what the workload
  // wants. `acts` is set when it got that far (observed, valid recommendation).
  Decision Plan(Workload& w, Result<ScaleState> scale, bool& acts);
  // Every listed workload's Observe, inline or through engine_calls_.
  std::vector<Result<ScaleState>> ObserveAll(const std::vector<size_t>& which);
  // Applies the listed workloads' d.constrained (ds[i] is workloads_[i]'s), concurrently when
  // engine_calls_ is set, and records each outcome in its Decision.
  void ActAll(const std::vector<size_t>& which, TimePoint now, std::vector<Decision*>& ds);
  // The elastic workload's room in the pool as of the last allocation, as a max_available. A
  // job the pool shrank is held at its size until what it lost is free, for one hold at most
  // (it notes in its pool_state when that wait began).
  std::optional<int> PoolRoom(Workload& w, int current, std::optional<int> engine,
                              TimePoint now) const;
  bool HoldsForWholeRegrowth(Workload& w, int current, int64_t free_replicas, TimePoint now) const;
  // GPUs the pool took from a job for a peak that it waits to get back in one step (while
  // HoldsForWholeRegrowth may hold it): not lent to another job meanwhile, else that job pays a
  // restart for GPUs the waiting one is owed. 0 once it is whole again, completed, or done
  // waiting (one hold past its regrowth hold at most).
  int64_t OwedGpus(const Workload& w, int size, TimePoint now) const;
  // What lent GPUs are expected to last for the elastic workload (PolicyInput::pool_lease).
  std::optional<PolicyInput::Lease> LeaseOf(const Workload& w, int current) const;
  // Opens or closes the workload's loan (PoolLoans) from its grant.
  void TrackLoan(const Workload& w, const PoolClaim& c, const Grant& g, double now_s);
  // Runs the allocator over this tick's plans; writes each grant into its Decision.
  void AllocatePool(std::vector<Decision>& ds, const std::vector<char>& acts, TimePoint now);
  // A pool of a fixed size less departed_gpus_, the Decisions' pool detail saying whose.
  void LeaveOutDeparted(AllocatorInput& in) const;
  void RecordPool(Workload& w, Decision& d, const PoolClaim& c, const Grant& g, TimePoint now);
  PoolClaim ClaimOf(const Workload& w, const Decision& d, bool acts, TimePoint now) const;
  void CountPool(const Allocation& a) const;
  PoolView PoolViewOf(const Allocation& a) const;
  int Expected(Workload& w, const PoolClaim& c, TimePoint now) const;
  std::optional<int64_t> StableIdle(double now_s);
  std::optional<int64_t> LendableIdle(std::optional<int64_t> stable,
                                      const std::vector<PoolClaim>& claims) const;
  void ReadSignals(Workload& w, TimePoint now, Decision& d);
  static const ReplicaSet* Replicas(Workload& w);
  void Resolve(const Workload& w, Decision& d) const;
  void RecordCompleted(Decision& d) const;
  // True when `d` calls for an Apply; otherwise says in `d` why not (a follower, a dry run).
  bool ShouldApply(Decision& d) const;
  // `tier_off`: why the engine served the awake size alone (ApplyScale), or empty.
  void RecordApply(Workload& w, TimePoint now, Decision& d, const Status& st,
                   const std::string& tier_off);
  // Applies an operator's override to d.constrained and says so in constrain_reason; true when
  // it changed the size to act on.
  bool ApplySteering(Workload& w, Decision& d) const;
  // The workload's states under their keys, with `d` (null: the states alone).
  StoreWrite WriteOf(const Workload& w, const Decision* d) const;
  // Writes the batch; a failure is recorded in every Decision it held (the tick still counts).
  void Persist(const std::vector<StoreWrite>& writes, std::vector<Decision*> decisions);
  void Count(const Decision& d, bool held_for_missing_data) const;
  static bool HeldForMissingData(const Workload& w, const Decision& d);
  void Publish(const std::vector<Decision>& decisions, TimePoint now) const;

  Clock& clock_;
  Store* store_;
  ControllerOptions options_;
  InlineExecutor inline_executor_;
  Collector collector_;
  std::unique_ptr<EngineCalls> engine_calls_;  // null: engines called inline
  std::vector<std::unique_ptr<Workload>> workloads_;
  // Of workloads_, so Add is O(1), not O(n), and Replace and Remove find theirs by pointer.
  std::unordered_map<std::string, const Workload*> keys_;
  std::vector<StoreWrite> batch_;             // Tick's writes, one per workload, kept across ticks
  std::shared_ptr<const SteeringMap> steer_;  // the overrides as of this tick's start
  StoreHealth store_health_;
  std::atomic<bool> may_apply_{true};
  std::optional<PoolSpec> pool_spec_;
  const PoolAllocator* allocator_ = nullptr;
  std::unique_ptr<PoolWatch> pool_watch_;
  Allocation last_allocation_;                           // for PoolRoom and the API
  std::deque<std::pair<double, int64_t>> idle_history_;  // (t_s, idle GPUs) after allocations
  std::optional<int64_t> last_elastic_idle_;             // StableIdle at the last allocation
  int64_t owed_gpus_ = 0;  // sum of the workloads' owed_gpus at the last allocation
  // GPUs of pool members removed while their replicas ran, by key (a pool of a fixed size
  // cannot see them go; an engine-read one counts them as others'): not lent until re-added.
  std::map<std::string, int64_t> departed_gpus_;
  PoolLoans loans_;                      // GPUs lent to elastic workloads
  std::optional<double> loan_estimate_;  // loans_.Expected at the last allocation
  std::string last_pool_note_;
  mutable std::mutex reason_mu_;  // guards not_applying_reason_
  std::string not_applying_reason_;
};

}  // namespace aiscale::control
