#include "sim/event_queue.h"

namespace aiscale::sim {

uint64_t EventQueue::At(TimePoint t, Fn fn) {
  if (t < clock_.Now()) t = clock_.Now();
  const uint64_t seq = next_seq_++;
  heap_.push({t, seq, std::move(fn)});
  return seq;
}

size_t EventQueue::RunUntil(TimePoint t) {
  size_t n = 0;
  stopped_ = false;
  while (!heap_.empty() && !stopped_ && heap_.top().at <= t) {
    // The heap's top is const; moving out before pop() is safe and avoids copying fn.
    Event e = std::move(const_cast<Event&>(heap_.top()));
    heap_.pop();
    clock_.AdvanceTo(e.at);
    e.fn();
    ++n;
  }
  if (!stopped_) clock_.AdvanceTo(t);
  return n;
}

size_t EventQueue::Run() {
  size_t n = 0;
  stopped_ = false;
  while (!heap_.empty() && !stopped_) {
    // The heap's top is const; moving out before pop() is safe and avoids copying fn.
    Event e = std::move(const_cast<Event&>(heap_.top()));
    heap_.pop();
    clock_.AdvanceTo(e.at);
    e.fn();
    ++n;
  }
  return n;
}

TimePoint EventQueue::NextWakeup() const {
  return heap_.empty() ? TimePoint::max() : heap_.top().at;
}

}  // namespace aiscale::sim
