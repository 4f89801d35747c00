// Controller::Replace and Controller::Remove: workloads changed and removed at run time (the
// AIScalers a watch delivers), kept apart from the tick itself.
#include <algorithm>

#include "control/controller.h"

namespace aiscale::control {
namespace {

// Same fetches: the collection (and the history read from it) carries over.
bool SameSignals(const WorkloadBinding& a, const WorkloadBinding& b) {
  if (a.signals.size() != b.signals.size() || a.history_capacity != b.history_capacity) {
    return false;
  }
  for (size_t i = 0; i < a.signals.size(); ++i) {
    const SignalBinding& x = a.signals[i];
    const SignalBinding& y = b.signals[i];
    if (x.signal != y.signal || x.expression != y.expression || x.source != y.source ||
        x.interval != y.interval || x.timeout != y.timeout) {
      return false;
    }
  }
  return true;
}

}  // namespace

size_t Controller::IndexOf(const std::string& key) const {
  const auto it = keys_.find(key);
  if (it == keys_.end()) return workloads_.size();
  for (size_t i = 0; i < workloads_.size(); ++i) {
    if (workloads_[i].get() == it->second) return i;
  }
  return workloads_.size();
}

Status Controller::Replace(WorkloadBinding b) {
  const std::string key = b.ref.Key();
  RETURN_IF_ERROR(Check(b, key));
  const size_t i = IndexOf(key);
  if (i == workloads_.size()) {
    return Status::NotFound("unable to replace workload " + key + ": not managed");
  }
  RETURN_IF_ERROR(CheckPool(b, key));
  // A call still running past its tick may use the old binding's engine: let it end first.
  if (engine_calls_ && b.actuator != workloads_[i]->binding.actuator) engine_calls_->Settle(key);
  Workload& old = *workloads_[i];
  auto w = std::make_unique<Workload>(std::move(b));
  const std::string base = w->binding.state_key.empty() ? key : w->binding.state_key;
  if (base + "/policy" == old.policy_key) {
    // The same object: its stabilizer state (windows, the last scale) stays whatever changed,
    // its policy state only while the policy is the same one.
    w->key = key;
    w->policy_key = old.policy_key;
    w->stabilizer_key = old.stabilizer_key;
    w->pool_key = old.pool_key;
    w->stabilizer_state = std::move(old.stabilizer_state);
    w->pool_state = std::move(old.pool_state);
    w->last_current = old.last_current;
    if (w->binding.policy->Name() == old.binding.policy->Name()) {
      w->policy_state = std::move(old.policy_state);
    }
  } else {
    RETURN_IF_ERROR(LoadStates(*w));
  }
  if (SameSignals(old.binding, w->binding)) {
    w->collect_id = old.collect_id;
    w->signals = std::move(old.signals);
    w->signal_slots = std::move(old.signal_slots);
  } else {
    collector_.Remove(old.collect_id);
    StartCollecting(*w);
  }
  keys_[key] = w.get();
  workloads_[i] = std::move(w);
  if (i < batch_.size()) batch_[i] = WriteOf(*workloads_[i], nullptr);
  return Status::Ok();
}

Status Controller::Remove(const std::string& key) {
  const size_t i = IndexOf(key);
  if (i == workloads_.size()) {
    return Status::NotFound("unable to remove workload " + key + ": not managed");
  }
  Status st;
  if (store_) {
    StoreWrite write = WriteOf(*workloads_[i], nullptr);
    write.flush = true;
    st = store_->WriteBatch({write});
    if (!st.ok()) st = st.Wrap("unable to write the states of removed workload " + key);
  }
  collector_.Remove(workloads_[i]->collect_id);
  // A call still running past its tick may use the engine, which may go with the workload.
  if (engine_calls_) engine_calls_->Settle(key);
  if (options_.telemetry) {
    for (const char* gauge :
         {"aiscale_workload_desired_replicas", "aiscale_workload_current_replicas",
          "aiscale_workload_ready_replicas"}) {
      options_.telemetry->Forget(gauge, "workload", key);
    }
  }
  loans_.Drop(key);
  const Workload& w = *workloads_[i];
  if (w.binding.pool && pool_spec_ && pool_spec_->from.empty()) {
    // Never observed, the least it runs at stays held: more could shrink others for GPUs that
    // may not be in use.
    const int64_t replicas = w.last_current ? *w.last_current : w.binding.min_replicas;
    departed_gpus_[key] = replicas * w.binding.pool->gpus_per_replica;
  }
  keys_.erase(key);
  workloads_.erase(workloads_.begin() + static_cast<std::ptrdiff_t>(i));
  if (i < batch_.size()) batch_.erase(batch_.begin() + static_cast<std::ptrdiff_t>(i));
  return st;
}

}  // namespace aiscale::control
