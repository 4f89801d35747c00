#include "control/controller.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "core/numeric.h"

namespace aiscale::control {
namespace {

void DeclareMetrics(Telemetry& t) {
  t.DeclareCounter("aiscale_ticks_total", "Controller ticks completed.");
  t.DeclareHistogram("aiscale_tick_duration_seconds", "Wall time of one controller tick.",
                     {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5});
  t.DeclareCounter("aiscale_decisions_total", "Decisions recorded, by policy and rule.");
  t.DeclareCounter("aiscale_scale_changes_total", "Scale changes applied, by workload.");
  t.DeclareCounter("aiscale_apply_errors_total",
                   "Failed Observe or Apply calls, by workload and error kind.");
  t.DeclareCounter("aiscale_scale_down_vetoes_total",
                   "Decisions that held because a required signal had no data or only part of "
                   "it (the Controller's veto or the policy's own hold), by workload.");
  t.DeclareCounter("aiscale_store_write_errors_total",
                   "Ticks whose decisions and states the Store could not write (a full disk...).");
  t.DeclareGauge("aiscale_store_writable", "1 when the last write to the Store succeeded, else 0.");
  t.DeclareGauge("aiscale_engine_calls_late",
                 "Engine calls (Observe, Apply) still running past their tick's deadline; their "
                 "workloads hold until each ends.");
  t.DeclareGauge("aiscale_workload_desired_replicas", "Replicas the last decision asked for.");
  t.DeclareGauge("aiscale_workload_current_replicas", "Replicas in the engine's spec.");
  t.DeclareGauge("aiscale_workload_ready_replicas", "Replicas ready to do work.");
}

}  // namespace

Controller::Controller(Clock& clock, Store* store, ControllerOptions options)
    : clock_(clock),
      store_(store),
      options_(options),
      collector_(options.executor ? *options.executor : inline_executor_, options.telemetry) {
  if (options_.telemetry) DeclareMetrics(*options_.telemetry);
  if (options_.engine_calls) engine_calls_ = std::make_unique<EngineCalls>(*options_.engine_calls);
}

Status Controller::Check(const WorkloadBinding& b, const std::string& key) {
  if (!b.policy) return Status::Invalid("unable to add workload " + key + ": no policy");
  if (!b.actuator) return Status::Invalid("unable to add workload " + key + ": no actuator");
  std::set<std::string> bound;
  for (const auto& s : b.signals) {
    if (!s.source) {
      return Status::Invalid("unable to add workload " + key + ": signal " + s.signal +
                             " has no source");
    }
    bound.insert(s.signal);
  }
  for (const auto& s : b.policy->Signals()) {
    if (!bound.count(s)) {
      return Status::Invalid("unable to add workload " + key + ": policy " +
                             std::string(b.policy->Name()) + " reads " + s +
                             " but no source is bound for it");
    }
  }
  return Status::Ok();
}

Status Controller::CheckPool(const WorkloadBinding& b, const std::string& key) const {
  if (b.pool.has_value() != pool_spec_.has_value()) {
    return Status::Invalid("unable to add workload " + key +
                           (b.pool
                                ? ": it has a pool place but the controller has no pool"
                                : ": the controller has a pool and the workload no place in it"));
  }
  if (b.pool &&
      (b.pool->tenant < 0 || static_cast<size_t>(b.pool->tenant) >= pool_spec_->tenants.size() ||
       b.pool->priority < 0 ||
       static_cast<size_t>(b.pool->priority) >= pool_spec_->priorities.size())) {
    return Status::Invalid("unable to add workload " + key +
                           ": tenant or priority not in the pool");
  }
  return Status::Ok();
}

Status Controller::LoadStates(Workload& w) const {
  const std::string key = w.binding.ref.Key();
  const std::string base = w.binding.state_key.empty() ? key : w.binding.state_key;
  w.key = key;
  w.policy_key = base + "/policy";
  w.stabilizer_key = base + "/stabilizer";
  w.pool_key = base + "/pool";
  if (!store_) return Status::Ok();
  auto ps = store_->LoadState(w.policy_key);
  if (!ps.ok()) return ps.status().Wrap("unable to load policy state for " + key);
  auto ss = store_->LoadState(w.stabilizer_key);
  if (!ss.ok()) return ss.status().Wrap("unable to load stabilizer state for " + key);
  w.policy_state = std::move(ps).value();
  w.stabilizer_state = std::move(ss).value();
  if (w.binding.pool) {
    auto pl = store_->LoadState(w.pool_key);
    if (!pl.ok()) return pl.status().Wrap("unable to load pool state for " + key);
    w.pool_state = std::move(pl).value();
  }
  return Status::Ok();
}

void Controller::StartCollecting(Workload& w) {
  std::vector<CollectSignal> collect;
  for (const SignalBinding& s : w.binding.signals) {
    collect.push_back({s.signal, s.expression, s.source,
                       s.interval.count() > 0 ? s.interval : options_.collect_interval,
                       s.timeout.count() > 0 ? s.timeout : options_.fetch_timeout,
                       w.binding.staleness});
  }
  w.collect_id = collector_.Add(w.binding.ref, collect);
}

Status Controller::Add(WorkloadBinding b) {
  const std::string key = b.ref.Key();
  RETURN_IF_ERROR(Check(b, key));
  if (keys_.count(key)) {
    return Status::Conflict("unable to add workload " + key + ": name already in use");
  }
  RETURN_IF_ERROR(CheckPool(b, key));
  auto w = std::make_unique<Workload>(std::move(b));
  RETURN_IF_ERROR(LoadStates(*w));
  if (options_.steering) RETURN_IF_ERROR(options_.steering->Restore(key));
  StartCollecting(*w);
  departed_gpus_.erase(key);  // managed again: its claim counts what it holds
  keys_[key] = w.get();
  workloads_.push_back(std::move(w));
  return Status::Ok();
}

Status Controller::Reconfigure(size_t index, const WorkloadBinding& fresh) {
  if (index >= workloads_.size()) return Status::NotFound("no workload at that index");
  Workload& w = *workloads_[index];
  if (fresh.ref.Key() != w.key || !fresh.policy) {
    return Status::Invalid("unable to reconfigure " + w.key +
                           ": a different workload or no policy");
  }
  if (fresh.policy->Name() != w.binding.policy->Name()) w.policy_state = PersistentState{};
  w.binding.policy = fresh.policy;
  w.binding.stabilizer = fresh.stabilizer;
  w.binding.constraints = fresh.constraints;
  w.binding.min_replicas = fresh.min_replicas;
  w.binding.max_replicas = fresh.max_replicas;
  w.binding.staleness = fresh.staleness;
  return Status::Ok();
}

void Controller::Collect() {
  const TimePoint now = clock_.Now();
  collector_.RunDue(now);
  if (pool_watch_) pool_watch_->RunDue(now);
}

TimePoint Controller::NextCollect() const {
  const TimePoint signals = collector_.NextDue();
  return pool_watch_ ? std::min(signals, pool_watch_->NextDue()) : signals;
}

std::vector<Decision> Controller::Tick() {
  const auto t0 = std::chrono::steady_clock::now();  // telemetry only
  std::vector<Decision> out;
  out.reserve(workloads_.size());
  if (options_.steering) steer_ = options_.steering->Snapshot();
  std::vector<char> acts(workloads_.size(), 0);
  std::vector<size_t> all(workloads_.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<Result<ScaleState>> scales = ObserveAll(all);
  for (size_t i = 0; i < workloads_.size(); ++i) {
    bool a = false;
    out.push_back(Plan(*workloads_[i], std::move(scales[i]), a));
    acts[i] = a;
  }
  const TimePoint now = clock_.Now();
  if (pool_spec_ && pool_spec_->allocate) AllocatePool(out, acts, now);
  // Shrinks first, so that what they free is there when the growths are applied.
  std::vector<Decision*> ds(out.size());
  for (size_t i = 0; i < out.size(); ++i) ds[i] = &out[i];
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<size_t> which;
    for (size_t i = 0; i < out.size(); ++i) {
      const bool shrink = out[i].constrained < out[i].current;
      if (acts[i] && shrink == (pass == 0)) which.push_back(i);
    }
    ActAll(which, now, ds);
  }
  if (store_) {
    // A workload's write names the same keys and states every tick: built once (the keys are
    // longer than a short string, so each would be an allocation a tick), only the decision
    // changes.
    for (size_t i = batch_.size(); i < workloads_.size(); ++i) {
      batch_.push_back(WriteOf(*workloads_[i], &out[i]));
    }
    std::vector<Decision*> decisions;
    decisions.reserve(out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      batch_[i].decision = &out[i];
      decisions.push_back(&out[i]);
    }
    Persist(batch_, std::move(decisions));
    for (StoreWrite& w : batch_) w.decision = nullptr;  // `out` is the caller's now
  }
  if (options_.board) Publish(out, clock_.Now());
  if (options_.telemetry) {
    for (size_t i = 0; i < out.size(); ++i)
      Count(out[i], HeldForMissingData(*workloads_[i], out[i]));
    options_.telemetry->Add("aiscale_ticks_total", {});
    if (engine_calls_) {
      options_.telemetry->Set("aiscale_engine_calls_late", {},
                              static_cast<double>(engine_calls_->Late()));
    }
    options_.telemetry->Observe(
        "aiscale_tick_duration_seconds", {},
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return out;
}

Decision Controller::TickOne(size_t index) {
  Workload& w = *workloads_[index];
  if (options_.steering) steer_ = options_.steering->Snapshot();
  bool acts = false;
  Decision d = Plan(w, std::move(ObserveAll({index})[0]), acts);
  if (w.binding.pool && d.constrained > d.current) {
    d.constrained = d.current;
    d.constrain_reason += (d.constrain_reason.empty() ? "" : "; ") +
                          std::string("in a pool: growth is allocated by the full tick");
  }
  if (acts) {
    std::vector<Decision*> ds(workloads_.size(), nullptr);
    ds[index] = &d;
    ActAll({index}, clock_.Now(), ds);
  }
  if (store_) Persist({WriteOf(w, &d)}, {&d});
  return d;
}

Status Controller::FlushStates() {
  if (!store_ || workloads_.empty()) return Status::Ok();
  std::vector<StoreWrite> writes;
  writes.reserve(workloads_.size());
  for (const auto& w : workloads_) {
    writes.push_back(WriteOf(*w, nullptr));
    writes.back().flush = true;
  }
  return store_->WriteBatch(writes);
}

std::vector<Result<ScaleState>> Controller::ObserveAll(const std::vector<size_t>& which) {
  std::vector<Result<ScaleState>> out;
  out.reserve(which.size());
  if (!engine_calls_) {
    for (size_t i : which)
      out.push_back(workloads_[i]->binding.actuator->Observe(workloads_[i]->binding.ref));
    return out;
  }
  std::vector<EngineCalls::Call> calls;
  calls.reserve(which.size());
  for (size_t i : which)
    calls.push_back({workloads_[i]->binding.actuator, workloads_[i]->binding.ref, 0});
  return engine_calls_->Observe(calls);
}

Decision Controller::Plan(Workload& w, Result<ScaleState> scale, bool& acts) {
  acts = false;
  WorkloadBinding& b = w.binding;
  const TimePoint now = clock_.Now();
  Decision d;
  d.workload = b.ref.Key();
  d.policy = std::string(b.policy->Name());
  d.at = now;
  if (options_.stamp_wall_time) d.wall = clock_.WallNow();

  if (!scale.ok()) {
    // Without the current scale there is nothing safe to do; record and move on.
    d.recommendation.rule = "observe_failed";
    d.recommendation.reason = scale.status().message();
    d.action = Action::kFailed;
    d.action_code = scale.status().code();
    d.action_detail = "unable to observe scale: " + scale.status().message();
    return d;
  }
  d.current = scale->current;
  d.ready = scale->ready;
  d.asleep = scale->asleep;
  d.engine_detail = scale->detail;
  w.last_current = scale->current;
  ReadSignals(w, now, d);
  w.completed = scale->completed;
  if (w.completed) {
    RecordCompleted(d);
    return d;
  }
  const std::optional<int> max_available = PoolRoom(w, scale->current, scale->max_available, now);

  PolicyInput in{w.signals,
                 scale->current,
                 scale->ready,
                 now,
                 max_available,
                 w.pool_limit,
                 LeaseOf(w, scale->current),
                 scale->asleep,
                 scale->asleep_ready};
  d.recommendation = b.policy->Recommend(in, w.policy_state);
  Resolve(w, d);
  if (!d.recommendation.valid) {
    acts = ApplySteering(w, d);  // a pin holds even without a valid policy
    return d;
  }
  // Stabilize after the veto, so a vetoed scale-down is not remembered as a recommendation.
  if (b.stabilizer) {
    const int rec = d.stabilized;
    StabilizeResult st = b.stabilizer->Stabilize(rec, d.current, now, w.stabilizer_state);
    d.stabilized = st.desired;
    if (!st.reason.empty()) {
      d.stabilize_reason += (d.stabilize_reason.empty() ? "" : "; ") + st.reason;
    }
  }
  if (b.constraints) {
    ConstrainResult c = b.constraints->Constrain(d.stabilized, d.current, max_available);
    d.constrained = c.desired;
    d.constrain_reason = c.reason;
  } else {
    d.constrained = d.stabilized;
  }
  ApplySteering(w, d);
  acts = true;
  return d;
}

// A finished workload: nothing to decide or apply, and the Decision says so.
void Controller::RecordCompleted(Decision& d) const {
  d.recommendation.desired = d.stabilized = d.constrained = d.current;
  d.recommendation.valid = true;
  d.recommendation.rule = std::string(kRuleCompleted);
  std::string& why = d.recommendation.reason;
  why = "the engine reports the workload completed";
  if (!d.engine_detail.empty()) why.append(" (").append(d.engine_detail).append(")");
  why.append(": no restart, replacement or rescale");
}

bool Controller::ApplySteering(Workload& w, Decision& d) const {
  w.steered = false;
  if (!steer_ || steer_->empty()) return false;
  auto it = steer_->find(w.key);
  if (it == steer_->end()) return false;
  const SteerResult r = Steer(it->second, d.current, d.constrained, w.binding.min_replicas,
                              w.binding.max_replicas, clock_.WallNow());
  if (r.note.empty()) return false;
  w.steered = true;
  const bool changed = r.desired != d.constrained;
  d.constrained = r.desired;
  d.constrain_reason += (d.constrain_reason.empty() ? "" : "; ") + r.note;
  return changed;
}

void Controller::ReadSignals(Workload& w, TimePoint now, Decision& d) {
  const WorkloadBinding& b = w.binding;
  const std::vector<Reading> readings = collector_.Read(w.collect_id, now);
  // Each bound signal's slot in w.signals, resolved on the first read (which adds the
  // signals, as the first Ingest did) and by index on every later tick.
  if (w.signal_slots.empty()) {
    for (const SignalBinding& s : b.signals) w.signal_slots.push_back(w.signals.Slot(s.signal));
  }
  d.inputs.reserve(b.signals.size());
  const ReplicaSet* replicas = Replicas(w);
  for (size_t k = 0; k < b.signals.size() && k < readings.size(); ++k) {
    const SignalBinding& s = b.signals[k];
    const size_t slot = w.signal_slots[k];
    const FetchResult& r = *readings[k];
    if (r.ok()) {
      w.signals.Ingest(slot, *r, now, b.staleness, replicas);
    } else {
      w.signals.MarkFetchFailed(slot, r.status().message());
    }
    const SignalSnapshot& snap = w.signals.Get(slot);
    d.inputs.push_back({s.signal, snap.status, snap.mean, snap.sum,
                        static_cast<int>(snap.instances.size()), snap.detail});
  }
}

// The engine's replicas now, when it says (local processes, Slurm jobs), so per-replica series
// are matched to them; null when it does not.
const ReplicaSet* Controller::Replicas(Workload& w) {
  auto endpoints = w.binding.actuator->Endpoints(w.binding.ref);
  if (!endpoints.ok()) return nullptr;
  w.replicas.Assign(*endpoints);
  return &w.replicas;
}

// From the recommendation to `stabilized` (before the stabilizer): holds on an invalid
// recommendation, and vetoes a scale-down when a required signal has no data.
void Controller::Resolve(const Workload& w, Decision& d) const {
  if (!d.recommendation.valid) {
    d.stabilized = d.constrained = d.current;
    d.stabilize_reason = "policy gave no valid recommendation; holding";
    return;
  }
  if (d.recommendation.desired < 0) {
    // No policy means this; an overflow somewhere does. Never act on it.
    d.stabilized = d.constrained = d.current;
    d.stabilize_reason = "policy recommended " + std::to_string(d.recommendation.desired) +
                         " replicas (below zero); holding";
    d.recommendation.valid = false;
    return;
  }
  int rec = std::min(d.recommendation.desired, kMaxReplicaCount);
  // Safety net over every policy: a required signal without data, or with only part of it,
  // vetoes a scale-down (a sum over the pods that answered is not the load).
  if (rec < d.current) {
    const Policy& policy = *w.binding.policy;
    for (const auto& name : policy.Signals()) {
      const SignalSnapshot& snap = w.signals.Get(name);
      if (!snap.ok() || (!snap.complete() && !policy.HandlesPartial(name))) {
        d.stabilize_reason = "scale-down vetoed: " + name + " is " +
                             std::string(SignalStatusName(snap.status)) + " (" + snap.detail + ")";
        rec = d.current;
        d.vetoed = true;
        break;
      }
    }
  }
  d.stabilized = rec;
}

void Controller::ActAll(const std::vector<size_t>& which, TimePoint now,
                        std::vector<Decision*>& ds) {
  std::vector<size_t> apply;
  for (size_t i : which) {
    if (ShouldApply(*ds[i])) apply.push_back(i);
  }
  if (!engine_calls_) {
    for (size_t i : apply) {
      const WorkloadBinding& b = workloads_[i]->binding;
      std::string tier_off;
      const Status st = ApplyScale(*b.actuator, b.ref, ds[i]->constrained,
                                   ds[i]->recommendation.asleep, ds[i]->current, tier_off);
      RecordApply(*workloads_[i], now, *ds[i], st, tier_off);
    }
    return;
  }
  std::vector<EngineCalls::Call> calls;
  calls.reserve(apply.size());
  for (size_t i : apply) {
    const WorkloadBinding& b = workloads_[i]->binding;
    calls.push_back(
        {b.actuator, b.ref, ds[i]->constrained, ds[i]->recommendation.asleep, ds[i]->current});
  }
  std::vector<std::string> tier_off;
  const std::vector<Status> done = engine_calls_->Apply(calls, &tier_off);
  for (size_t k = 0; k < apply.size(); ++k) {
    RecordApply(*workloads_[apply[k]], now, *ds[apply[k]], done[k], tier_off[k]);
  }
}

bool Controller::ShouldApply(Decision& d) const {
  const int target = d.constrained;
  if (!may_apply_.load()) {  // a follower: say so even when there is nothing to apply
    std::lock_guard<std::mutex> lock(reason_mu_);
    d.action_detail = not_applying_reason_.empty() ? "not applying" : not_applying_reason_;
    if (target != d.current) {
      d.action_detail +=
          ": would scale " + std::to_string(d.current) + " -> " + std::to_string(target);
    }
    return false;
  }
  const int asleep = d.recommendation.asleep;  // -1: the policy has no warm tier
  if (target == d.current && (asleep < 0 || asleep == d.asleep)) return false;
  if (options_.dry_run) {
    d.action_detail =
        "dry run: would scale " + std::to_string(d.current) + " -> " + std::to_string(target);
    return false;
  }
  return true;
}

void Controller::RecordApply(Workload& w, TimePoint now, Decision& d, const Status& st,
                             const std::string& tier_off) {
  const int target = d.constrained;
  const int asleep = tier_off.empty() ? d.recommendation.asleep : -1;
  const WorkloadBinding& b = w.binding;
  if (!tier_off.empty()) d.action_detail = "warm tier off: " + tier_off + "; ";
  // The tier is off and the awake size was already right: nothing changed.
  if (st.ok() && !tier_off.empty() && target == d.current) return;
  if (st.ok()) {
    d.action = Action::kScaled;
    d.action_detail += std::to_string(d.current) + " -> " + std::to_string(target);
    if (asleep >= 0) d.action_detail += ", " + std::to_string(asleep) + " asleep";
    if (b.stabilizer) b.stabilizer->RecordScale(d.current, target, now, w.stabilizer_state);
  } else {
    d.action = Action::kFailed;
    d.action_code = st.code();
    d.action_detail = st.message();
  }
}

void Controller::SetMayApply(bool may_apply, const std::string& reason) {
  std::lock_guard<std::mutex> lock(reason_mu_);
  not_applying_reason_ = reason;
  may_apply_.store(may_apply);
}

StoreWrite Controller::WriteOf(const Workload& w, const Decision* d) const {
  StoreWrite out{d, {{w.policy_key, &w.policy_state}, {w.stabilizer_key, &w.stabilizer_state}}};
  if (w.binding.pool) out.states.emplace_back(w.pool_key, &w.pool_state);
  return out;
}

void Controller::Persist(const std::vector<StoreWrite>& writes, std::vector<Decision*> decisions) {
  const Status st = store_->WriteBatch(writes);
  if (const std::string event = store_health_.Record(st); !event.empty() && options_.log) {
    options_.log(event);
  }
  if (options_.telemetry) {
    options_.telemetry->Set("aiscale_store_writable", {}, st.ok() ? 1 : 0);
    if (!st.ok()) options_.telemetry->Add("aiscale_store_write_errors_total", {});
  }
  if (st.ok()) return;
  for (Decision* d : decisions) {
    d->action_detail += (d->action_detail.empty() ? "" : "; ") +
                        std::string("unable to persist decision: ") + st.message();
  }
}

// The policy itself held (no valid recommendation) while a required signal had no data, or
// only part of it: the same refusal as the Controller's veto, decided one step earlier.
bool Controller::HeldForMissingData(const Workload& w, const Decision& d) {
  if (d.recommendation.valid || d.recommendation.rule == "observe_failed") return false;
  for (const auto& name : w.binding.policy->Signals()) {
    if (!w.signals.Get(name).complete()) return true;
  }
  return false;
}

void Controller::Count(const Decision& d, bool held_for_missing_data) const {
  Telemetry& t = *options_.telemetry;
  const MetricLabels wl = {{"workload", d.workload}};
  t.Add("aiscale_decisions_total", {{"policy", d.policy}, {"rule", d.recommendation.rule}});
  if (d.action == Action::kScaled) t.Add("aiscale_scale_changes_total", wl);
  if (d.action == Action::kFailed) {
    t.Add("aiscale_apply_errors_total",
          {wl[0], {"code", std::string(StatusCodeName(d.action_code))}});
  }
  if (d.vetoed || held_for_missing_data) t.Add("aiscale_scale_down_vetoes_total", wl);
  const int desired = d.action == Action::kFailed && d.current == 0 ? 0 : d.constrained;
  t.Set("aiscale_workload_desired_replicas", wl, desired);
  t.Set("aiscale_workload_current_replicas", wl,
        d.action == Action::kScaled ? d.constrained : d.current);
  t.Set("aiscale_workload_ready_replicas", wl, d.ready);
}

void Controller::Publish(const std::vector<Decision>& decisions, TimePoint now) const {
  std::vector<WorkloadView> views;
  views.reserve(workloads_.size());
  for (size_t i = 0; i < workloads_.size() && i < decisions.size(); ++i) {
    const Workload& w = *workloads_[i];
    const Decision& d = decisions[i];
    WorkloadView v;
    v.ref = w.binding.ref;
    v.policy = d.policy;
    v.engine = std::string(w.binding.actuator->Name());
    v.current = d.action == Action::kScaled ? d.constrained : d.current;
    v.ready = d.ready;
    v.desired = d.constrained;
    if (w.completed) v.state = std::string(kRuleCompleted);
    v.last = d;
    v.min_replicas = w.binding.min_replicas;
    v.max_replicas = w.binding.max_replicas;
    if (steer_ && !steer_->empty()) {
      auto it = steer_->find(w.key);
      if (it != steer_->end() && it->second.ActiveAt(clock_.WallNow())) v.steering = it->second;
    }
    for (const SignalBinding& s : w.binding.signals) {
      const SignalSnapshot& snap = w.signals.Get(s.signal);
      const bool seen = snap.at.time_since_epoch().count() != 0;
      v.signals.push_back({s.signal, std::string(s.source->Name()), snap.status, snap.mean,
                           snap.sum, static_cast<int>(snap.instances.size()),
                           seen ? ToSeconds(now - snap.at) : -1.0, snap.detail});
    }
    views.push_back(std::move(v));
  }
  options_.board->Publish(std::move(views));
}

}  // namespace aiscale::control
