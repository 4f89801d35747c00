// Controller: one tick = for every workload, observe -> recommend -> stabilize -> constrain ->
// act -> record a Decision. Signals come from the Collector's snapshots, so a tick never waits
// on the network; Collect() starts the fetches that are due (the daemon calls it from its own
// thread, the simulator as a queue event, tests before each Tick).
//
// Promises: missing, stale or invalid signals, failed or late fetches never lead to a
// scale-down (the Decision says which signal was missing); a failed Observe or Apply is
// recorded with its error kind, not thrown, and the next workload still gets its turn. Policy
// and stabilizer state is loaded from the Store when a workload is added and saved after every
// tick, so a restart resumes windows and learned models. Time comes only from the injected
// Clock. Tick and Add are called from one thread; Collect and NextCollect may be called from
// another. The same code runs under the simulator.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "control/collector.h"
#include "control/executor.h"
#include "control/live_board.h"
#include "control/store_health.h"
#include "core/actuator.h"
#include "core/clock.h"
#include "core/decision.h"
#include "core/metric_source.h"
#include "core/policy.h"
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
};

struct ControllerOptions {
  Executor* executor = nullptr;    // null: inline (fetches finish inside Collect)
  Telemetry* telemetry = nullptr;  // null: nothing counted
  LiveBoard* board = nullptr;      // null: no snapshots published for the API
  Duration collect_interval = Seconds(15);
  Duration fetch_timeout = Seconds(5);
  // Stamp each Decision with the clock's wall time. The simulator turns it off: its decision
  // logs carry virtual time only.
  bool stamp_wall_time = true;
  // Decide and record exactly as live, and never call Apply (`aiscale run --dry-run`).
  bool dry_run = false;
  // Where events worth one log line go (the Store failing and resuming); null: nowhere.
  std::function<void(const std::string&)> log;
};

class Controller {
 public:
  // `store` may be null (nothing persisted). Everything passed must outlive the Controller.
  Controller(Clock& clock, Store* store, ControllerOptions options = {});

  // Fails if the binding lacks a policy, actuator or a source for a signal the policy reads,
  // if the name is taken, or if stored state cannot be loaded.
  Status Add(WorkloadBinding binding);
  // Starts every signal fetch that is due now; returns without waiting (see Collector).
  void Collect();
  TimePoint NextCollect() const { return collector_.NextDue(); }
  // One pass over all workloads, in the order they were added; what they decided is written
  // to the Store as one batch at the end (one commit per tick).
  std::vector<Decision> Tick();
  // Turns applying off or on at run time (leader election: only the leader applies). While off,
  // a tick decides and records exactly as live, calls no Apply, and its Decisions say action
  // none with `reason` ("not leader (leader: x)"). Checked before each Apply; thread-safe.
  void SetMayApply(bool may_apply, const std::string& reason = "");
  bool may_apply() const { return may_apply_.load(); }
  // Runs one workload's tick and writes it to the Store on its own.
  Decision TickOne(size_t index);
  // Writes every workload's states to the Store now, whatever its cadence
  // (StoreOptions::state_every_ticks): called on a clean stop so that nothing learned is lost.
  Status FlushStates();
  size_t size() const { return workloads_.size(); }
  const WorkloadBinding& binding(size_t i) const { return workloads_[i]->binding; }
  const WorkloadSignals& signals(size_t i) const { return workloads_[i]->signals; }
  const Collector& collector() const { return collector_; }

 private:
  struct Workload {
    WorkloadBinding binding;
    WorkloadSignals signals;
    PersistentState policy_state;
    PersistentState stabilizer_state;
    std::string policy_key, stabilizer_key;  // in the Store, built once
    size_t collect_id = 0;
    std::vector<size_t> signal_slots;  // binding.signals[k] -> its slot in `signals`
    ReplicaSet replicas;               // the engine's, as of this tick's read
    Workload(WorkloadBinding b) : binding(std::move(b)), signals(binding.history_capacity) {}
  };
  // The tick of one workload, without writing it.
  Decision Decide(Workload& w);
  void ReadSignals(Workload& w, TimePoint now, Decision& d);
  static const ReplicaSet* Replicas(Workload& w);
  void Resolve(const Workload& w, Decision& d) const;
  void Act(Workload& w, TimePoint now, Decision& d);
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
  std::vector<std::unique_ptr<Workload>> workloads_;
  std::unordered_set<std::string> keys_;  // of workloads_, so Add is O(1), not O(n)
  std::vector<StoreWrite> batch_;         // Tick's writes, one per workload, kept across ticks
  StoreHealth store_health_;
  std::atomic<bool> may_apply_{true};
  mutable std::mutex reason_mu_;  // guards not_applying_reason_
  std::string not_applying_reason_;
};

}  // namespace aiscale::control
