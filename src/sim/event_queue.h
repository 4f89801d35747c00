// EventQueue and SimClock: the simulator's virtual time.
//
// Events are ordered by (time, seq): equal times run in scheduling order, so a run is
// deterministic. Time is integer nanoseconds. The queue owns its clock; two simulations in
// one process never share time (docs/architecture.md, practice 11). SimClock moves only when the
// queue runs an event or AdvanceTo is called. Not thread-safe: the simulator is single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "core/clock.h"

namespace aiscale::sim {

class SimClock final : public Clock {
 public:
  explicit SimClock(TimePoint start = TimePoint{}) : now_(start) {}
  TimePoint Now() const override { return now_; }
  WallTime WallNow() const override { return WallTime(now_.time_since_epoch()); }
  // Under the simulator, sleeping is advancing; never moves backwards.
  void SleepUntil(TimePoint t) override { AdvanceTo(t); }
  void AdvanceTo(TimePoint t) {
    if (t > now_) now_ = t;
  }
  void Advance(Duration d) { AdvanceTo(now_ + d); }

 private:
  TimePoint now_;
};

class EventQueue {
 public:
  using Fn = std::function<void()>;
  explicit EventQueue(TimePoint start = TimePoint{}) : clock_(start) {}

  // Schedules fn at t (clamped to now if in the past). Returns the event's sequence number.
  uint64_t At(TimePoint t, Fn fn);
  uint64_t After(Duration d, Fn fn) { return At(AddSaturating(clock_.Now(), d), std::move(fn)); }
  // Runs events with time <= t in order, then advances the clock to t. Returns events run.
  size_t RunUntil(TimePoint t);
  // Runs everything (until empty or Stop()).
  size_t Run();
  void Stop() { stopped_ = true; }
  // At most `n` events run over this queue's life (the run budget, docs/limits.md); the next
  // RunUntil/Run then stops early and budget_exceeded() turns true. Default: no limit.
  void set_event_limit(uint64_t n) { event_limit_ = n; }
  bool budget_exceeded() const { return budget_exceeded_; }
  uint64_t events_run() const { return events_run_; }
  bool empty() const { return heap_.empty(); }
  // Earliest pending event time, or TimePoint::max() when empty.
  TimePoint NextWakeup() const;
  SimClock& clock() { return clock_; }
  TimePoint Now() const { return clock_.Now(); }

 private:
  // False (and stopped) once event_limit_ events have run.
  bool Budget();

  struct Event {
    TimePoint at;
    uint64_t seq;
    Fn fn;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  SimClock clock_;
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
  bool stopped_ = false;
  uint64_t event_limit_ = UINT64_MAX;
  uint64_t events_run_ = 0;
  bool budget_exceeded_ = false;
};

}  // namespace aiscale::sim
