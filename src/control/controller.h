// Controller: one tick = for every workload, observe -> recommend -> stabilize -> constrain ->
// act -> record a Decision.
//
// Promises: missing, stale or invalid signals and failed fetches never lead to a scale-down
// (the Decision says which signal was missing); a failed Observe or Apply is recorded, not
// thrown, and the next workload still gets its turn. Policy and stabilizer state is loaded
// from the Store when a workload is added and saved after every tick, so a restart resumes
// windows and learned models. Time comes only from the injected Clock.
// Not thread-safe: one thread calls Tick(). The same code runs under the simulator.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/actuator.h"
#include "core/clock.h"
#include "core/decision.h"
#include "core/metric_source.h"
#include "core/policy.h"
#include "core/scale.h"
#include "core/store.h"
#include "core/workload_signals.h"

namespace aiscale::control {

struct SignalBinding {
  std::string signal;      // canonical name
  std::string expression;  // passed to the source (PromQL, metric name); may be empty
  MetricSource* source = nullptr;
};

struct WorkloadBinding {
  WorkloadRef ref;
  std::vector<SignalBinding> signals;  // must cover Policy::Signals()
  std::unique_ptr<Policy> policy;
  std::unique_ptr<Stabilizer> stabilizer;    // may be null: pass-through
  std::unique_ptr<Constrainer> constraints;  // may be null: none
  Actuator* actuator = nullptr;
  Duration staleness = Seconds(45);
  size_t history_capacity = 4096;
};

class Controller {
 public:
  // `store` may be null (nothing persisted). Both must outlive the Controller.
  Controller(Clock& clock, Store* store) : clock_(clock), store_(store) {}

  // Fails if the binding lacks a policy, actuator or a source for a signal the policy reads,
  // if the name is taken, or if stored state cannot be loaded.
  Status Add(WorkloadBinding binding);
  // One pass over all workloads, in the order they were added; what they decided is written
  // to the Store as one batch at the end (one commit per tick).
  std::vector<Decision> Tick();
  // Runs one workload's tick and writes it to the Store on its own.
  Decision TickOne(size_t index);
  size_t size() const { return workloads_.size(); }
  const WorkloadBinding& binding(size_t i) const { return workloads_[i]->binding; }
  const WorkloadSignals& signals(size_t i) const { return workloads_[i]->signals; }

 private:
  struct Workload {
    WorkloadBinding binding;
    WorkloadSignals signals;
    PersistentState policy_state;
    PersistentState stabilizer_state;
    Workload(WorkloadBinding b) : binding(std::move(b)), signals(binding.history_capacity) {}
  };
  // The tick of one workload, without writing it.
  Decision Decide(Workload& w);
  StoreWrite WriteOf(const Workload& w, const Decision& d) const;
  // Writes the batch; a failure is recorded in every Decision it held (the tick still counts).
  void Persist(const std::vector<StoreWrite>& writes, std::vector<Decision*> decisions);

  Clock& clock_;
  Store* store_;
  std::vector<std::unique_ptr<Workload>> workloads_;
  std::unordered_set<std::string> keys_;  // of workloads_, so Add is O(1), not O(n)
};

}  // namespace aiscale::control
