#include "control/pool_watch.h"

#include <algorithm>

namespace aiscale::control {

PoolWatch::PoolWatch(PoolSource& source, Executor& executor, Duration interval, Duration staleness,
                     Duration shrink_grace)
    : source_(source),
      executor_(executor),
      interval_(interval),
      staleness_(staleness),
      grace_(shrink_grace) {}

void PoolWatch::RunDue(TimePoint now) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    // The workloads aiscale manages changed since the last reading: read again now, not when due.
    const bool moved = state_->last && state_->last->basis != source_.Basis();
    if (state_->in_flight || (now < state_->next_due && !moved)) return;
    state_->in_flight = true;
    state_->next_due = now + interval_;
  }
  std::shared_ptr<State> state = state_;
  PoolSource* source = &source_;
  const Duration grace = grace_;
  executor_.Run([state, source, now, grace] { Store(*state, source->Observe(), now, grace); });
}

void PoolWatch::Store(State& s, Result<PoolCapacity> got, TimePoint at, Duration grace) {
  std::lock_guard<std::mutex> lock(s.mu);
  s.in_flight = false;
  if (!got.ok()) {
    s.error = got.status().message();
    s.run_start.reset();
    return;
  }
  if (got->gpus < 0) {
    s.error = "the engine reported " + std::to_string(got->gpus) + " GPUs";
    s.run_start.reset();
    return;
  }
  s.error.clear();
  if (!s.run_start || at - s.last_at > grace) s.run_start = at;
  s.sizes.emplace_back(at, got->gpus);
  while (!s.sizes.empty() && s.sizes.front().first < at - grace) s.sizes.pop_front();
  s.last = std::move(got).value();
  s.last_at = at;
}

TimePoint PoolWatch::NextDue() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->in_flight ? TimePoint::max() : state_->next_due;
}

PoolReading PoolWatch::Read(TimePoint now) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  PoolReading r;
  if (!state_->error.empty()) {
    r.note = "pool source failed: " + state_->error;
    return r;
  }
  if (!state_->last) {
    r.note = "pool size not reported yet";
    return r;
  }
  if (state_->last_at < now - staleness_) {
    r.note = "pool size last reported " + std::to_string(ToSeconds(now - state_->last_at)) +
             " s ago (stale)";
    return r;
  }
  if (state_->last->basis != source_.Basis()) {
    // Counted with an older set of managed workloads: a newcomer's GPUs would count as others'.
    r.note = "pool size being read again: the workloads aiscale manages changed";
    return r;
  }
  r.capacity = state_->last;
  r.watched_s = state_->run_start ? ToSeconds(now - *state_->run_start) : 0;
  r.settled = r.watched_s >= ToSeconds(grace_);
  int64_t held = r.capacity->gpus;
  for (const auto& [at, gpus] : state_->sizes) {
    if (at >= now - grace_) held = std::max(held, gpus);
  }
  if (held > r.capacity->gpus) {
    r.note = "the engine reports " + std::to_string(r.capacity->gpus) + " GPUs; " +
             std::to_string(held) + " counted until the drop lasts " +
             std::to_string(static_cast<int64_t>(ToSeconds(grace_))) + " s";
    r.capacity->gpus = held;
  }
  return r;
}

}  // namespace aiscale::control
