#include "control/steering_board.h"

#include <utility>
#include <vector>

namespace aiscale::control {
SteeringBoard::SteeringBoard(Clock& clock, Store* store, const LiveView& view)
    : clock_(clock), store_(store), view_(view), map_(std::make_shared<SteeringMap>()) {}

Status SteeringBoard::Restore(const std::string& key) {
  if (!store_) return Status::Ok();
  auto st = store_->LoadState(StateKey(key));
  if (!st.ok()) return st.status().Wrap("unable to load the override of " + key);
  auto s = SteeringFromState(*st);
  if (!s.ok()) return s.status().Wrap("unable to read the override of " + key);
  if (!s->ActiveAt(clock_.WallNow())) return Status::Ok();
  std::lock_guard<std::mutex> lock(map_mu_);
  auto next = std::make_shared<SteeringMap>(*map_);
  (*next)[key] = *s;
  map_ = std::move(next);
  return Status::Ok();
}

std::shared_ptr<const SteeringMap> SteeringBoard::Snapshot() const {
  std::lock_guard<std::mutex> lock(map_mu_);
  return map_;
}

Result<WorkloadView> SteeringBoard::Resolve(const std::string& name) const {
  if (!view_.Ready()) {
    return Status::Unavailable("not ready: no controller tick has completed yet; try again");
  }
  std::vector<WorkloadView> matches;
  for (WorkloadView& w : view_.Workloads()) {
    if (w.ref.Key() == name) return std::move(w);
    if (w.ref.name == name && name.find('/') == std::string::npos) matches.push_back(std::move(w));
  }
  if (matches.size() == 1) return std::move(matches[0]);
  if (matches.size() > 1) {
    std::string keys;
    for (const auto& w : matches) keys += (keys.empty() ? "" : ", ") + w.ref.Key();
    return Status::Invalid("workload name '" + name +
                           "' is ambiguous; use namespace/name, one of: " + keys);
  }
  return Status::NotFound("unknown workload '" + name + "'");
}

Result<Steering> SteeringBoard::Next(const SteerRequest& r, const WorkloadView& w,
                                     const Steering& in_force, WallTime now,
                                     std::string& message) const {
  Steering s;
  s.source = SteerSource::kApi;
  s.since = now;
  s.until = r.until;
  switch (r.op) {
    case SteerOp::kPause:
      s.mode = SteerMode::kPaused;
      s.direction = r.direction;
      message = s.Describe();
      return s;
    case SteerOp::kPin:
      RETURN_IF_ERROR(CheckPin(r.replicas, w.min_replicas, w.max_replicas));
      s.mode = SteerMode::kPinned;
      s.replicas = r.replicas;
      message = s.Describe();
      return s;
    case SteerOp::kResume:
      message = in_force.mode == SteerMode::kNone
                    ? "resumed by API (it was not paused or pinned)"
                    : "resumed by API: " + std::string(SteerModeName(in_force.mode)) +
                          " ended, the policy decides again";
      return Steering{};
    case SteerOp::kUnpin:
      if (in_force.mode == SteerMode::kPaused) {
        return Status::Conflict("workload " + w.ref.Key() + " is not pinned: it is " +
                                in_force.Describe() + " (use resume)");
      }
      message = in_force.mode == SteerMode::kNone ? "unpinned by API (it was not pinned)"
                                                  : "unpinned by API: the policy decides again";
      return Steering{};
  }
  return Status::Invalid("unknown steering operation");
}

Decision SteeringBoard::Record(const WorkloadView& w, const Steering& s,
                               const std::string& message) const {
  Decision d;
  d.workload = w.ref.Key();
  d.policy = w.policy;
  d.at = clock_.Now();
  d.wall = clock_.WallNow();
  d.current = w.current;
  d.ready = w.ready;
  const int target = s.mode == SteerMode::kPinned ? s.replicas : w.current;
  d.recommendation = {target, true, "steering", message, {}};
  d.stabilized = d.constrained = target;
  d.constrain_reason = message;
  d.action_detail = target == w.current ? "recorded" : "recorded; the next tick applies it";
  return d;
}

Result<SteerOutcome> SteeringBoard::Apply(const SteerRequest& r) {
  std::lock_guard<std::mutex> apply_lock(apply_mu_);
  ASSIGN_OR_RETURN(WorkloadView w, Resolve(r.workload));
  const std::string key = w.ref.Key();
  const WallTime now = clock_.WallNow();
  std::shared_ptr<const SteeringMap> before = Snapshot();
  Steering in_force;
  if (auto it = before->find(key); it != before->end() && it->second.ActiveAt(now)) {
    in_force = it->second;
  }
  std::string message;
  ASSIGN_OR_RETURN(Steering next, Next(r, w, in_force, now, message));
  if (next.mode != SteerMode::kNone && next.until.time_since_epoch().count() != 0 &&
      next.until <= now) {
    return Status::Invalid("the end time " + FormatWallTime(next.until) + " is not in the future");
  }
  if (store_) {
    const Decision d = Record(w, next, message);
    const PersistentState state = SteeringToState(next);
    StoreWrite write{&d, {{StateKey(key), &state}}, true};
    const Status st = store_->WriteBatch({write});
    if (!st.ok()) {
      return Status::Unavailable("unable to record the change of " + key +
                                 ", nothing changed: " + st.message());
    }
  }
  auto map = std::make_shared<SteeringMap>(*before);
  if (next.mode == SteerMode::kNone) {
    map->erase(key);
  } else {
    (*map)[key] = next;
  }
  {
    std::lock_guard<std::mutex> lock(map_mu_);
    map_ = std::move(map);
  }
  return SteerOutcome{key, next, message};
}

}  // namespace aiscale::control
