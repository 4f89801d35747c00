#include "sim/event_queue.h"

namespace aiscale::sim {

uint64_t EventQueue::At(TimePoint t, Fn fn) {
  if (t < clock_.Now()) t = clock_.Now();
  const uint64_t seq = next_seq_++;
  heap_.push({t, seq, std::move(fn)});
  return seq;
}

bool EventQueue::Budget() {
  if (events_run_ < event_limit_) return true;
  budget_exceeded_ = true;
  stopped_ = true;
  return false;
}

size_t EventQueue::RunUntil(TimePoint t) {
  size_t n = 0;
  stopped_ = false;
  while (!heap_.empty() && !stopped_ && heap_.top().at <= t) {
    if (!Budget()) return n;
    // The heap's top is const; moving out before pop() is safe and avoids copying fn.
    Event e = std::move(const_cast<Event&>(heap_.top()));
    heap_.pop();
    clock_.AdvanceTo(e.at);
    e.fn();
    ++n;
    ++events_run_;
  }
  if (!stopped_) clock_.AdvanceTo(t);
  return n;
}

size_t EventQueue::Run() {
  size_t n = 0;
  stopped_ = false;
  while (!heap_.empty() && !stopped_) {
    if (!Budget()) return n;
    // The heap's top is const; moving out before pop() is safe and avoids copying fn.
    Event e = std::move(const_cast<Event&>(heap_.top()));
    heap_.pop();
    clock_.AdvanceTo(e.at);
    e.fn();
    ++n;
    ++events_run_;
  }
  return n;
}

TimePoint EventQueue::NextWakeup() const {
  return heap_.empty() ? TimePoint::max() : heap_.top().at;
}

}  // namespace aiscale::sim
