// LeadLearner: how long a replica asked for now takes to serve (provisioning + model load),
// measured from the engine's own current/ready counts rather than taken on faith.
//
// When the spec'd count rises, the time and the new count are remembered; when that many are
// ready, the wait is a measurement (at tick resolution). The estimate starts at the configured
// cold start (WorkloadContext.cold_start_s) and moves a third of the way to each measurement,
// so one slow start does not double it. A scale-down before the replicas are ready cancels the
// measurement. Pure over its PersistentState (keys under `prefix`). Not thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/state.h"

namespace aiscale::decide::serving {

class LeadLearner {
 public:
  LeadLearner(double prior_s, PersistentState& state, std::string_view prefix);
  // One tick: the spec'd, ready and asleep counts at now_s. Returns the estimate (seconds).
  // A rise that the warm tier paid for (fewer asleep) is a wake, not a cold start: not timed.
  double Observe(int current, int ready, int asleep, double now_s);
  double estimate() const;
  int measurements() const;

 private:
  double prior_s_;
  PersistentState& state_;
  std::string key_;  // [estimate, measurements, last current, pending since (-1 none), target,
                     //  last asleep]
};

}  // namespace aiscale::decide::serving
