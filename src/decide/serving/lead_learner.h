// LeadLearner: how long a replica asked for now takes to serve (provisioning + model load),
// measured from the engine's own current/ready counts rather than taken on faith.
//
// When the spec'd count rises, the time and the new count are remembered; when that many are
// ready, the wait is a measurement (at tick resolution). The estimate starts at the configured
// cold start (WorkloadContext.cold_start_s) and moves a third of the way to each measurement,
// so one slow start does not double it. A scale-down before the replicas are ready cancels the
// measurement. The same learner times wakes (kWake): a rise paid for by replicas asleep (the
// warm tier, loaded: not one still loading toward sleep), started while every earlier replica
// was ready, so a cold start is never taken for a wake. Pure over its PersistentState (keys under
// `prefix`). Not thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/state.h"

namespace aiscale::decide::serving {

class LeadLearner {
 public:
  enum class Kind { kColdStart, kWake };
  LeadLearner(double prior_s, PersistentState& state, std::string_view prefix,
              Kind kind = Kind::kColdStart);
  // One tick's counts (PolicyInput's): spec'd awake, ready, kept asleep, and of them asleep now.
  struct Counts {
    int current = 0, ready = 0, asleep = 0, asleep_ready = 0;
  };
  // Returns the estimate (seconds). kColdStart times rises the warm tier did not pay for
  // (asleep unchanged); kWake times only rises that woke at least as many sleepers as were
  // added, all of them asleep (loaded) the tick before.
  double Observe(const Counts& c, double now_s);
  double estimate() const;
  int measurements() const;

 private:
  // Whether a rise to `c` from `before` awake and `slept` kept asleep (`slept_ready` of them
  // loaded) is one this learner times.
  bool Times(const Counts& c, int before, int slept, int slept_ready) const;

  double prior_s_;
  Kind kind_;
  PersistentState& state_;
  std::string key_;  // [estimate, measurements, last current, pending since (-1 none), target,
                     //  last asleep, last asleep_ready]
};

}  // namespace aiscale::decide::serving
