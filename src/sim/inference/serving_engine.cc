#include "sim/inference/serving_engine.h"

#include <algorithm>
#include <cmath>

#include "core/numeric.h"

namespace aiscale::sim::inference {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double Unit(uint64_t h) { return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

int64_t PlainServiceNs(const traces::TraceRequest& q, const EngineOptions& o) {
  const uint64_t h =
      Mix(o.seed ^ Mix(static_cast<uint64_t>(q.arrival_ns) ^
                       (static_cast<uint64_t>(q.input_tokens) << 32) ^ q.output_tokens));
  const double u = Unit(h);
  const double u2 = Unit(Mix(h));
  // Box-Muller from two independent draws.
  const double z = std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * u2);
  return o.model.ServiceNs(q.output_tokens, u2, z);
}

ServingEngine::ServingEngine(EngineOptions o)
    : o_(std::move(o)),
      stats_(o_.slo, SaturatingNanos(o_.window_s)),
      timeout_ns_(SaturatingNanos(o_.queue_timeout_s)),
      slo_ttft_ns_(SaturatingNanos(o_.slo.ttft_s)),
      slo_latency_ns_(SaturatingNanos(o_.slo.latency_s)),
      heads_(static_cast<size_t>(o_.model.Slots()) + 1, -1),
      min_level_(static_cast<int>(heads_.size())) {
  stats_.SetRetention(SaturatingNanos(o_.stats_retention_s));
}

void ServingEngine::Link(Replica& r) {
  r.level = r.in_flight;
  r.prev = -1;
  r.next = heads_[static_cast<size_t>(r.level)];
  if (r.next >= 0) replicas_[static_cast<size_t>(r.next)].prev = r.id;
  heads_[static_cast<size_t>(r.level)] = r.id;
  min_level_ = std::min(min_level_, r.level);
}

void ServingEngine::Unlink(Replica& r) {
  if (r.level < 0) return;
  if (r.prev >= 0) {
    replicas_[static_cast<size_t>(r.prev)].next = r.next;
  } else {
    heads_[static_cast<size_t>(r.level)] = r.next;
  }
  if (r.next >= 0) replicas_[static_cast<size_t>(r.next)].prev = r.prev;
  r.level = r.prev = r.next = -1;
}

void ServingEngine::Relevel(Replica& r) {
  if (r.level < 0 || r.level == r.in_flight) return;
  Unlink(r);
  Link(r);
}

ServingEngine::Replica* ServingEngine::LeastLoaded(const traces::TraceRequest& q) {
  const int slots = o_.model.Slots();
  while (min_level_ < slots && heads_[static_cast<size_t>(min_level_)] < 0) ++min_level_;
  for (int level = min_level_; level < slots; ++level) {
    for (int id = heads_[static_cast<size_t>(level)]; id >= 0;) {
      Replica& r = replicas_[static_cast<size_t>(id)];
      if (CanAdmit(r, q)) return &r;
      id = r.next;
    }
  }
  return nullptr;
}

int ServingEngine::AddReplica(int64_t ready_at_ns, bool asleep_when_ready) {
  const int id = static_cast<int>(replicas_.size());
  replicas_.emplace_back();
  Replica& r = replicas_.back();
  r.id = id;
  r.asleep_when_ready = asleep_when_ready;
  r.requested_ns = now_;
  r.ready_ns = std::max(ready_at_ns, now_);
  live_.push_back(id);
  if (r.ready_ns <= now_) {
    OnReady(r);
  } else {
    Schedule(r, r.ready_ns);
  }
  return id;
}

void ServingEngine::RemoveReplica(int id) {
  Replica& r = replicas_[static_cast<size_t>(id)];
  if (r.state == ReplicaState::kAsleep) {
    EndSleep(r);
    Retire(r);
    return;
  }
  if (r.state == ReplicaState::kSleeping) r.state = ReplicaState::kDraining;
  if (r.state == ReplicaState::kStarting) {
    Retire(r);  // its version bump cancels the ready event
  } else if (r.state == ReplicaState::kReady) {
    r.state = ReplicaState::kDraining;
    Unlink(r);
    MaybeRetire(r);
  }
}

void ServingEngine::SleepReplica(int id) {
  Replica& r = replicas_[static_cast<size_t>(id)];
  if (r.state == ReplicaState::kStarting) {
    r.asleep_when_ready = true;
  } else if (r.state == ReplicaState::kReady) {
    r.state = ReplicaState::kSleeping;
    Unlink(r);
    MaybeSleep(r);
  }
}

void ServingEngine::WakeReplica(int id, int64_t ready_at_ns) {
  Replica& r = replicas_[static_cast<size_t>(id)];
  if (r.state == ReplicaState::kStarting) {
    r.asleep_when_ready = false;
  } else if (r.state == ReplicaState::kSleeping) {
    r.state = ReplicaState::kReady;  // never went to sleep: serves on
    Link(r);
    Dispatch();
  } else if (r.state == ReplicaState::kAsleep) {
    EndSleep(r);
    r.state = ReplicaState::kStarting;
    Schedule(r, std::max(ready_at_ns, now_));
  }
}

void ServingEngine::MaybeSleep(Replica& r) {
  if (r.state != ReplicaState::kSleeping || r.in_flight > 0) return;
  SetBusy(r, false);
  r.state = ReplicaState::kAsleep;
  r.asleep_since = now_;
  ++r.version;
}

void ServingEngine::EndSleep(Replica& r) {
  if (r.asleep_since >= 0) r.asleep_acc += now_ - r.asleep_since;
  r.asleep_since = -1;
}

void ServingEngine::MaybeRetire(Replica& r) {
  if (r.state != ReplicaState::kDraining || r.in_flight > 0) return;
  SetBusy(r, false);
  Retire(r);
}

void ServingEngine::Retire(Replica& r) {
  r.state = ReplicaState::kRetired;
  r.retired_ns = now_;
  ++r.version;
  live_.erase(std::find(live_.begin(), live_.end(), r.id));
}

int64_t ServingEngine::AsleepNs(const Replica& r) const {
  return r.asleep_acc + (r.asleep_since >= 0 ? now_ - r.asleep_since : 0);
}

void ServingEngine::Schedule(Replica& r, int64_t t) {
  ++r.version;
  r.next_event = t;
  events_.push(Event{t, seq_++, r.id, r.version});
}

void ServingEngine::ScheduleTimeout() {
  if (queue_.empty()) return;
  const int64_t t = queue_.front().arrival_ns + timeout_ns_ + 1;
  if (t >= timeout_event_at_) return;
  timeout_event_at_ = t;
  events_.push(Event{t, seq_++, -1, 0});
}

void ServingEngine::AdvanceTo(int64_t t_ns) {
  while (!events_.empty() && events_.top().t <= t_ns) {
    const Event e = events_.top();
    events_.pop();
    now_ = std::max(now_, e.t);
    Process(e);
  }
  now_ = std::max(now_, t_ns);
}

void ServingEngine::Process(const Event& e) {
  if (e.replica < 0) {
    if (e.t != timeout_event_at_) return;
    timeout_event_at_ = INT64_MAX;
    Dispatch();
    return;
  }
  Replica& r = replicas_[static_cast<size_t>(e.replica)];
  if (e.version != r.version) return;  // superseded
  r.next_event = INT64_MAX;
  if (r.state == ReplicaState::kStarting) {
    OnReady(r);
  } else if (o_.model.kind == ReplicaModel::Kind::kLlm) {
    Boundary(r);
  } else {
    BoundaryPlain(r);
  }
}

void ServingEngine::OnReady(Replica& r) {
  r.ready_ns = now_;
  r.mark_t = now_;
  if (r.asleep_when_ready) {
    r.asleep_when_ready = false;
    r.state = ReplicaState::kAsleep;
    r.asleep_since = now_;
    return;
  }
  r.state = ReplicaState::kReady;
  Link(r);
  Dispatch();
}

void ServingEngine::Arrive(const traces::TraceRequest& q) {
  AdvanceTo(q.arrival_ns);
  stats_.OnArrival(now_);
  if (o_.model.kind == ReplicaModel::Kind::kLlm &&
      static_cast<int64_t>(q.input_tokens) + q.output_tokens > o_.model.llm.kv_capacity_tokens) {
    stats_.OnDrop();  // could never be admitted anywhere
    return;
  }
  if (o_.max_queue > 0 && queue_.size() >= static_cast<size_t>(o_.max_queue)) {
    stats_.OnDrop();
    return;
  }
  queue_.push_back(q);
  // With strict FCFS a non-empty queue means its head was blocked at the last dispatch and
  // nothing has freed capacity since (every such change dispatches), so only a lone
  // request can go straight out.
  if (queue_.size() == 1) Dispatch();
}

bool ServingEngine::CanAdmit(const Replica& r, const traces::TraceRequest& q) const {
  if (r.in_flight >= o_.model.Slots()) return false;
  if (o_.model.kind == ReplicaModel::Kind::kLlm) {
    return r.kv_used + q.input_tokens + q.output_tokens <= o_.model.llm.kv_capacity_tokens;
  }
  return true;
}

void ServingEngine::Dispatch() {
  while (!queue_.empty()) {
    const traces::TraceRequest& head = queue_.front();
    if (now_ - head.arrival_ns > timeout_ns_) {
      stats_.OnTimeout();
      queue_.pop_front();
      continue;
    }
    Replica* best = LeastLoaded(head);
    if (best == nullptr) break;
    Admit(*best, head);
    queue_.pop_front();
  }
  ScheduleTimeout();
}

void ServingEngine::Admit(Replica& r, const traces::TraceRequest& q) {
  ++r.in_flight;
  ++in_flight_;
  Relevel(r);
  if (o_.model.kind == ReplicaModel::Kind::kPlain) {
    const int64_t done = now_ + PlainServiceNs(q, o_);
    r.running.push(Running{done, q.arrival_ns, done, q.output_tokens});
    stats_.OnFirstToken(now_, done, done - q.arrival_ns);  // a plain answer comes whole
    SetBusy(r, true);
    if (done < r.next_event && r.id != boundary_replica_) Schedule(r, done);
    return;
  }
  r.kv_used += static_cast<int64_t>(q.input_tokens) + q.output_tokens;
  r.pending.push_back(q);
  if (r.id == boundary_replica_) return;  // its boundary is starting the next segment now
  const int64_t b = r.stepping ? NextBoundary(r, now_) : now_;
  if (b < r.next_event) Schedule(r, b);
}

int64_t ServingEngine::NextBoundary(const Replica& r, int64_t t) const {
  const int64_t t1 = r.t0 + r.d0;
  if (t <= t1) return t1;
  const int64_t k = (t - t1 + r.dt - 1) / r.dt;
  return t1 + k * r.dt;
}

void ServingEngine::Boundary(Replica& r) {
  int64_t step = r.s0;
  if (r.stepping) {
    const int64_t n = now_ == r.t0 ? 0 : 1 + (now_ - r.t0 - r.d0) / r.dt;
    step = r.s0 + n;
    stats_.OnTokens(now_, static_cast<uint64_t>(n) * static_cast<uint64_t>(r.batch));
  }
  CompleteUpTo(r, step, /*plain=*/false);
  StartSegment(r, step);
  MaybeRetire(r);
  MaybeSleep(r);
}

void ServingEngine::CompleteUpTo(Replica& r, int64_t upto, bool plain) {
  // `finish` is a decode step index for LLM replicas and a time for plain ones.
  while (!r.running.empty() && r.running.top().finish <= upto) {
    const Running& done = r.running.top();
    stats_.OnComplete(now_, now_ - done.arrival_ns, done.first_token_ns - done.arrival_ns);
    if (done.arrival_ns >= count_from_ns_ && now_ - done.arrival_ns <= slo_latency_ns_ &&
        done.first_token_ns - done.arrival_ns <= slo_ttft_ns_) {
      ++counted_within_slo_;
    }
    if (plain) {
      stats_.OnTokens(now_, done.kv);  // kv holds the output size for plain servers
    } else {
      r.kv_used -= done.kv;
    }
    --r.in_flight;
    --in_flight_;
    r.running.pop();
  }
  Relevel(r);
  // Freed slots may admit queued requests right away.
  boundary_replica_ = r.id;
  Dispatch();
  boundary_replica_ = -1;
}

void ServingEngine::StartSegment(Replica& r, int64_t step) {
  const int batch = static_cast<int>(r.running.size() + r.pending.size());
  r.t0 = now_;
  r.s0 = step;
  r.batch = batch;
  if (batch == 0) {
    r.stepping = false;
    SetBusy(r, false);
    return;
  }
  int64_t prefill_tokens = 0;
  for (const auto& p : r.pending) prefill_tokens += p.input_tokens;
  r.dt = o_.model.StepNs(batch, r.kv_used);
  r.d0 = r.dt + o_.model.PrefillNs(prefill_tokens);
  const int64_t first_token = now_ + r.d0;
  for (const auto& p : r.pending) {
    r.running.push(Running{step + static_cast<int64_t>(p.output_tokens), p.arrival_ns, first_token,
                           p.input_tokens + p.output_tokens});
    stats_.OnFirstToken(now_, first_token, first_token - p.arrival_ns);
  }
  r.pending.clear();
  r.stepping = true;
  SetBusy(r, true);
  const int64_t f = r.running.top().finish;  // > step: every request has >= 1 token
  Schedule(r, now_ + r.d0 + (f - step - 1) * r.dt);
}

void ServingEngine::BoundaryPlain(Replica& r) {
  CompleteUpTo(r, now_, /*plain=*/true);
  if (!r.running.empty()) Schedule(r, r.running.top().finish);
  SetBusy(r, !r.running.empty());
  MaybeRetire(r);
  MaybeSleep(r);
}

void ServingEngine::SetBusy(Replica& r, bool busy) {
  if (busy == r.busy) return;
  if (busy) {
    r.busy_since = now_;
  } else {
    r.busy_acc += now_ - r.busy_since;
  }
  r.busy = busy;
}

int64_t ServingEngine::BusyNs(const Replica& r) const {
  return r.busy_acc + (r.busy ? now_ - r.busy_since : 0);
}

double ServingEngine::TakeBusyFraction(int id) {
  Replica& r = replicas_[static_cast<size_t>(id)];
  const int64_t busy = BusyNs(r);
  const int64_t span = now_ - r.mark_t;
  const double f = span > 0 ? static_cast<double>(busy - r.mark_busy) / static_cast<double>(span)
                            : (r.busy ? 1.0 : 0.0);
  r.mark_t = now_;
  r.mark_busy = busy;
  return std::clamp(f, 0.0, 1.0);
}

std::vector<traces::TraceRequest> ServingEngine::TakeQueue() {
  std::vector<traces::TraceRequest> out(queue_.begin(), queue_.end());
  queue_.clear();
  timeout_event_at_ = INT64_MAX;  // a pending timeout check finds nothing and is ignored
  return out;
}

bool ServingEngine::Idle() const { return queue_.empty() && in_flight_ == 0; }

int ServingEngine::CountState(ReplicaState s) const {
  int n = 0;
  for (const int id : live_) n += replicas_[static_cast<size_t>(id)].state == s;
  return n;
}

std::vector<ReplicaView> ServingEngine::Replicas() const {
  std::vector<ReplicaView> out;
  out.reserve(live_.size());
  for (const int id : live_) {
    const Replica& r = replicas_[static_cast<size_t>(id)];
    const double kv =
        o_.model.kind == ReplicaModel::Kind::kLlm
            ? static_cast<double>(r.kv_used) / static_cast<double>(o_.model.llm.kv_capacity_tokens)
            : 0.0;
    out.push_back(ReplicaView{id, r.state, r.in_flight, kv});
  }
  return out;
}

double ServingEngine::GpuSeconds() const {
  int64_t ns = 0;
  for (const Replica& r : replicas_) {
    ns += (r.retired_ns >= 0 ? r.retired_ns : now_) - r.requested_ns;
  }
  return static_cast<double>(ns) / 1e9 * o_.model.gpus_per_replica;
}

double ServingEngine::AsleepGpuSeconds() const {
  int64_t ns = 0;
  for (const Replica& r : replicas_) ns += AsleepNs(r);
  return static_cast<double>(ns) / 1e9 * o_.model.gpus_per_replica;
}

double ServingEngine::ReadyReplicaSeconds() const {
  int64_t ns = 0;
  for (const Replica& r : replicas_) {
    if (r.state == ReplicaState::kStarting) continue;
    if (r.state == ReplicaState::kRetired && r.retired_ns < r.ready_ns) continue;
    ns += (r.retired_ns >= 0 ? r.retired_ns : now_) - r.ready_ns;
    ns -= AsleepNs(r);
  }
  return static_cast<double>(ns) / 1e9;
}

}  // namespace aiscale::sim::inference
