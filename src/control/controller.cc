#include "control/controller.h"

#include <algorithm>
#include <chrono>
#include <set>

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
                   "Scale-downs refused because a required signal had no data, by workload.");
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

Status Controller::LoadStates(Workload& w) const {
  const std::string base = w.binding.state_key.empty() ? w.binding.ref.Key() : w.binding.state_key;
  w.policy_key = base + "/policy";
  w.stabilizer_key = base + "/stabilizer";
  if (!store_) return Status::Ok();
  const std::string key = w.binding.ref.Key();
  auto ps = store_->LoadState(w.policy_key);
  if (!ps.ok()) return ps.status().Wrap("unable to load policy state for " + key);
  auto ss = store_->LoadState(w.stabilizer_key);
  if (!ss.ok()) return ss.status().Wrap("unable to load stabilizer state for " + key);
  w.policy_state = std::move(ps).value();
  w.stabilizer_state = std::move(ss).value();
  return Status::Ok();
}

void Controller::StartCollecting(Workload& w) {
  std::vector<CollectSignal> collect;
  for (const SignalBinding& s : w.binding.signals) {
    collect.push_back({s.signal, s.expression, s.source,
                       s.interval.count() > 0 ? s.interval : options_.collect_interval,
                       s.timeout.count() > 0 ? s.timeout : options_.fetch_timeout});
  }
  w.collect_id = collector_.Add(w.binding.ref, collect);
}

Status Controller::Add(WorkloadBinding b) {
  const std::string key = b.ref.Key();
  RETURN_IF_ERROR(Check(b, key));
  if (keys_.count(key)) {
    return Status::Conflict("unable to add workload " + key + ": name already in use");
  }
  auto w = std::make_unique<Workload>(std::move(b));
  RETURN_IF_ERROR(LoadStates(*w));
  StartCollecting(*w);
  keys_[key] = w.get();
  workloads_.push_back(std::move(w));
  return Status::Ok();
}

void Controller::Collect() { collector_.RunDue(clock_.Now()); }

std::vector<Decision> Controller::Tick() {
  const auto t0 = std::chrono::steady_clock::now();  // telemetry only
  std::vector<Decision> out;
  out.reserve(workloads_.size());
  for (auto& w : workloads_) out.push_back(Decide(*w));
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
    for (const Decision& d : out) Count(d);
    options_.telemetry->Add("aiscale_ticks_total", {});
    options_.telemetry->Observe(
        "aiscale_tick_duration_seconds", {},
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return out;
}

Decision Controller::TickOne(size_t index) {
  Workload& w = *workloads_[index];
  Decision d = Decide(w);
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

Decision Controller::Decide(Workload& w) {
  WorkloadBinding& b = w.binding;
  const TimePoint now = clock_.Now();
  Decision d;
  d.workload = b.ref.Key();
  d.policy = std::string(b.policy->Name());
  d.at = now;
  if (options_.stamp_wall_time) d.wall = clock_.WallNow();

  auto scale = b.actuator->Observe(b.ref);
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
  d.engine_detail = scale->detail;
  ReadSignals(w, now, d);

  PolicyInput in{w.signals, scale->current, scale->ready, now, scale->max_available};
  d.recommendation = b.policy->Recommend(in, w.policy_state);
  Resolve(w, d);
  if (!d.recommendation.valid) return d;
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
    ConstrainResult c = b.constraints->Constrain(d.stabilized, d.current, scale->max_available);
    d.constrained = c.desired;
    d.constrain_reason = c.reason;
  } else {
    d.constrained = d.stabilized;
  }
  Act(w, now, d);
  return d;
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
  for (size_t k = 0; k < b.signals.size() && k < readings.size(); ++k) {
    const SignalBinding& s = b.signals[k];
    const size_t slot = w.signal_slots[k];
    const FetchResult& r = *readings[k];
    if (r.ok()) {
      w.signals.Ingest(slot, *r, now, b.staleness);
    } else {
      w.signals.MarkFetchFailed(slot, r.status().message());
    }
    const SignalSnapshot& snap = w.signals.Get(slot);
    d.inputs.push_back({s.signal, snap.status, snap.mean, snap.sum,
                        static_cast<int>(snap.instances.size()), snap.detail});
  }
}

// From the recommendation to `stabilized` (before the stabilizer): holds on an invalid
// recommendation, and vetoes a scale-down when a required signal has no data.
void Controller::Resolve(const Workload& w, Decision& d) const {
  if (!d.recommendation.valid) {
    d.stabilized = d.constrained = d.current;
    d.stabilize_reason = "policy gave no valid recommendation; holding";
    return;
  }
  int rec = d.recommendation.desired;
  // Safety net over every policy: a required signal without data vetoes a scale-down.
  if (rec < d.current) {
    for (const auto& name : w.binding.policy->Signals()) {
      const SignalSnapshot& snap = w.signals.Get(name);
      if (!snap.ok()) {
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

void Controller::Act(Workload& w, TimePoint now, Decision& d) {
  const int target = d.constrained;
  if (!may_apply_.load()) {  // a follower: say so even when there is nothing to apply
    std::lock_guard<std::mutex> lock(reason_mu_);
    d.action_detail = not_applying_reason_.empty() ? "not applying" : not_applying_reason_;
    if (target != d.current) {
      d.action_detail +=
          ": would scale " + std::to_string(d.current) + " -> " + std::to_string(target);
    }
    return;
  }
  if (target == d.current) return;
  WorkloadBinding& b = w.binding;
  if (options_.dry_run) {
    d.action_detail =
        "dry run: would scale " + std::to_string(d.current) + " -> " + std::to_string(target);
    return;
  }
  Status st = b.actuator->Apply(b.ref, target);
  if (st.ok()) {
    d.action = Action::kScaled;
    d.action_detail = std::to_string(d.current) + " -> " + std::to_string(target);
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
  return StoreWrite{d, {{w.policy_key, &w.policy_state}, {w.stabilizer_key, &w.stabilizer_state}}};
}

void Controller::Persist(const std::vector<StoreWrite>& writes, std::vector<Decision*> decisions) {
  const Status st = store_->WriteBatch(writes);
  if (st.ok()) return;
  for (Decision* d : decisions) {
    d->action_detail += (d->action_detail.empty() ? "" : "; ") +
                        std::string("unable to persist decision: ") + st.message();
  }
}

void Controller::Count(const Decision& d) const {
  Telemetry& t = *options_.telemetry;
  const MetricLabels wl = {{"workload", d.workload}};
  t.Add("aiscale_decisions_total", {{"policy", d.policy}, {"rule", d.recommendation.rule}});
  if (d.action == Action::kScaled) t.Add("aiscale_scale_changes_total", wl);
  if (d.action == Action::kFailed) {
    t.Add("aiscale_apply_errors_total",
          {wl[0], {"code", std::string(StatusCodeName(d.action_code))}});
  }
  if (d.vetoed) t.Add("aiscale_scale_down_vetoes_total", wl);
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
    v.last = d;
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
