#include "control/controller.h"

#include <algorithm>
#include <set>

namespace aiscale::control {

Status Controller::Add(WorkloadBinding b) {
  const std::string key = b.ref.Key();
  if (!b.policy) return Status::Error("unable to add workload " + key + ": no policy");
  if (!b.actuator) return Status::Error("unable to add workload " + key + ": no actuator");
  std::set<std::string> bound;
  for (const auto& s : b.signals) {
    if (!s.source) {
      return Status::Error("unable to add workload " + key + ": signal " + s.signal +
                           " has no source");
    }
    bound.insert(s.signal);
  }
  for (const auto& s : b.policy->Signals()) {
    if (!bound.count(s)) {
      return Status::Error("unable to add workload " + key + ": policy " +
                           std::string(b.policy->Name()) + " reads " + s +
                           " but no source is bound for it");
    }
  }
  if (keys_.count(key)) {
    return Status::Error("unable to add workload " + key + ": name already in use");
  }
  auto w = std::make_unique<Workload>(std::move(b));
  if (store_) {
    auto ps = store_->LoadState(key + "/policy");
    if (!ps.ok()) return ps.status().Wrap("unable to load policy state for " + key);
    auto ss = store_->LoadState(key + "/stabilizer");
    if (!ss.ok()) return ss.status().Wrap("unable to load stabilizer state for " + key);
    w->policy_state = std::move(ps).value();
    w->stabilizer_state = std::move(ss).value();
  }
  workloads_.push_back(std::move(w));
  keys_.insert(key);
  return Status::Ok();
}

std::vector<Decision> Controller::Tick() {
  std::vector<Decision> out;
  out.reserve(workloads_.size());
  for (auto& w : workloads_) out.push_back(Decide(*w));
  if (store_) {
    std::vector<StoreWrite> writes;
    std::vector<Decision*> decisions;
    writes.reserve(out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      writes.push_back(WriteOf(*workloads_[i], out[i]));
      decisions.push_back(&out[i]);
    }
    Persist(writes, std::move(decisions));
  }
  return out;
}

Decision Controller::TickOne(size_t index) {
  Workload& w = *workloads_[index];
  Decision d = Decide(w);
  if (store_) Persist({WriteOf(w, d)}, {&d});
  return d;
}

Decision Controller::Decide(Workload& w) {
  WorkloadBinding& b = w.binding;
  const TimePoint now = clock_.Now();
  Decision d;
  d.workload = b.ref.Key();
  d.policy = std::string(b.policy->Name());
  d.at = now;

  auto scale = b.actuator->Observe(b.ref);
  if (!scale.ok()) {
    // Without the current scale there is nothing safe to do; record and move on.
    d.recommendation.rule = "observe_failed";
    d.recommendation.reason = scale.status().message();
    d.action = Action::kFailed;
    d.action_detail = "unable to observe scale: " + scale.status().message();
    return d;
  }
  d.current = scale->current;
  d.ready = scale->ready;

  d.inputs.reserve(b.signals.size());
  for (const SignalBinding& s : b.signals) {
    auto obs = s.source->Fetch({b.ref, s.signal, s.expression}, now);
    if (obs.ok()) {
      w.signals.Ingest(s.signal, *obs, now, b.staleness);
    } else {
      w.signals.MarkFetchFailed(s.signal, obs.status().message());
    }
    const SignalSnapshot& snap = w.signals.Get(s.signal);
    d.inputs.push_back({s.signal, snap.status, snap.mean, snap.sum,
                        static_cast<int>(snap.instances.size()), snap.detail});
  }

  PolicyInput in{w.signals, scale->current, scale->ready, now, scale->max_available};
  d.recommendation = b.policy->Recommend(in, w.policy_state);

  int target = d.current;
  if (!d.recommendation.valid) {
    d.stabilized = d.constrained = d.current;
    d.stabilize_reason = "policy gave no valid recommendation; holding";
  } else {
    int rec = d.recommendation.desired;
    // Safety net over every policy: a required signal without data vetoes a scale-down.
    if (rec < d.current) {
      for (const auto& name : b.policy->Signals()) {
        const SignalSnapshot& snap = w.signals.Get(name);
        if (!snap.ok()) {
          d.stabilize_reason = "scale-down vetoed: " + name + " is " +
                               std::string(SignalStatusName(snap.status)) + " (" + snap.detail +
                               ")";
          rec = d.current;
          break;
        }
      }
    }
    if (b.stabilizer) {
      StabilizeResult st = b.stabilizer->Stabilize(rec, d.current, now, w.stabilizer_state);
      d.stabilized = st.desired;
      if (!st.reason.empty()) {
        d.stabilize_reason += (d.stabilize_reason.empty() ? "" : "; ") + st.reason;
      }
    } else {
      d.stabilized = rec;
    }
    if (b.constraints) {
      ConstrainResult c = b.constraints->Constrain(d.stabilized, d.current, scale->max_available);
      d.constrained = c.desired;
      d.constrain_reason = c.reason;
    } else {
      d.constrained = d.stabilized;
    }
    target = d.constrained;
  }

  if (target != d.current) {
    Status st = b.actuator->Apply(b.ref, target);
    if (st.ok()) {
      d.action = Action::kScaled;
      d.action_detail = std::to_string(d.current) + " -> " + std::to_string(target);
      if (b.stabilizer) b.stabilizer->RecordScale(d.current, target, now, w.stabilizer_state);
    } else {
      d.action = Action::kFailed;
      d.action_detail = st.message();
    }
  }
  return d;
}

StoreWrite Controller::WriteOf(const Workload& w, const Decision& d) const {
  const std::string key = w.binding.ref.Key();
  return StoreWrite{
      &d, {{key + "/policy", &w.policy_state}, {key + "/stabilizer", &w.stabilizer_state}}};
}

void Controller::Persist(const std::vector<StoreWrite>& writes, std::vector<Decision*> decisions) {
  const Status st = store_->WriteBatch(writes);
  if (st.ok()) return;
  for (Decision* d : decisions) {
    d->action_detail += (d->action_detail.empty() ? "" : "; ") +
                        std::string("unable to persist decision: ") + st.message();
  }
}

}  // namespace aiscale::control
