#include "sim/sim_pool.h"

#include <algorithm>

namespace aiscale::sim {

SimPool::Entry* SimPool::Find(SimWorkload* w) {
  for (Entry& e : entries_) {
    if (e.w == w) return &e;
  }
  return nullptr;
}

int64_t SimPool::Free() const {
  int64_t used = 0;
  for (const Entry& e : entries_) used += int64_t{e.running} * e.gpus;
  return gpus_ - used;
}

void SimPool::Account() {
  const TimePoint now = q_.Now();
  const double dt = ToSeconds(now - accounted_);
  accounted_ = now;
  if (dt <= 0) return;
  for (Entry& e : entries_) {
    e.held_gpu_s += dt * e.running * e.gpus;
    e.pending_gpu_s += dt * std::max(0, e.spec - e.running) * e.gpus;
    used_gpu_s_ += dt * e.running * e.gpus;
  }
}

void SimPool::Add(SimWorkload* w, int gpus_per_replica, int initial) {
  Account();
  Entry e;
  e.w = w;
  e.gpus = std::max(1, gpus_per_replica);
  e.spec = initial;
  e.running = static_cast<int>(std::clamp<int64_t>(Free() / e.gpus, 0, initial));
  e.waiting_since = q_.Now();
  entries_.push_back(e);
}

Result<ScaleState> SimPool::Observe(SimWorkload* w) {
  Entry* e = Find(w);
  ASSIGN_OR_RETURN(ScaleState s, w->Observe());
  if (!e) return s;
  if (e->spec > e->running) {
    s.detail = std::to_string(e->spec - e->running) +
               " replica(s) Pending: " + std::to_string(Free()) + " GPUs free, " +
               std::to_string(e->gpus) + " needed each";
  }
  s.current = e->spec;
  s.ready = std::min(s.ready, e->running);
  return s;
}

Status SimPool::Place(Entry& e, int running) {
  const Status st = e.w->Apply(running);
  if (st.ok()) e.running = running;
  return st;
}

Status SimPool::Apply(SimWorkload* w, int desired) {
  Entry* e = Find(w);
  if (!e) return w->Apply(desired);
  Account();
  if (desired > e->spec && e->spec <= e->running) e->waiting_since = q_.Now();
  e->spec = desired;
  if (desired <= e->running) {
    RETURN_IF_ERROR(Place(*e, desired));
    PlaceWaiting();
    return Status::Ok();
  }
  PlaceWaiting();  // an older wish goes first
  return Status::Ok();
}

void SimPool::PlaceWaiting() {
  std::vector<Entry*> waiting;
  for (Entry& e : entries_) {
    if (e.spec > e.running) waiting.push_back(&e);
  }
  std::stable_sort(waiting.begin(), waiting.end(), [](const Entry* a, const Entry* b) {
    return a->waiting_since < b->waiting_since;
  });
  for (Entry* e : waiting) {
    const int fits = static_cast<int>(std::max<int64_t>(0, Free() / e->gpus));
    const int to = e->running + std::min(fits, e->spec - e->running);
    if (to > e->running) (void)Place(*e, to);  // a refusal leaves it Pending
  }
}

Result<PoolCapacity> SimPool::Observe() {
  PoolCapacity c;
  c.gpus = gpus_;
  c.detail = std::to_string(gpus_) + " GPUs (simulated pool)";
  return c;
}

double SimPool::HeldGpus() const {
  double held = 0;
  for (const Entry& e : entries_) held += e.running * e.gpus;
  return held;
}

double SimPool::PendingGpus() const {
  double pending = 0;
  for (const Entry& e : entries_) pending += std::max(0, e.spec - e.running) * e.gpus;
  return pending;
}

nlohmann::json SimPool::Summary() {
  Account();
  const double elapsed = SinceEpochSeconds(q_.Now());
  nlohmann::json per = nlohmann::json::object();
  for (const Entry& e : entries_) {
    per[e.w->ref().name] = {{"gpu_hours_held", e.held_gpu_s / 3600},
                            {"pending_gpu_hours", e.pending_gpu_s / 3600}};
  }
  return {{"gpus", gpus_},
          {"utilization", elapsed > 0 && gpus_ > 0 ? used_gpu_s_ / (elapsed * gpus_) : 0.0},
          {"workloads", per}};
}

}  // namespace aiscale::sim
