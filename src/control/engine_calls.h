// EngineCalls: a tick's Observe and Apply calls, run off the tick thread and concurrently (at
// most `threads_per_engine` at once on each engine, by Actuator::Name(): one API server, one
// slurmctld), the tick waiting for a batch no longer than its deadline. The daemon's Controller
// uses it; the simulator and unit tests call the engines inline, on the same decision path.
//
// Promises: a call still running at the deadline goes on in the background and its workload's
// answer is kDeadlineExceeded, saying so; no second call is made for that workload until it
// ends, so a hung engine costs the others at most one deadline's wait and holds only its own
// engine's threads. A call its engine's busy threads could not start before the deadline never
// starts later: no stale Apply lands after its tick. The destructor waits for running calls
// (each engine bounds its own: core/actuator.h) and drops queued ones. Tick thread only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "control/executor.h"
#include "core/actuator.h"
#include "core/result.h"
#include "core/scale.h"
#include "core/time.h"

namespace aiscale::control {

struct EngineCallOptions {
  size_t threads_per_engine = 8;
  Duration observe_deadline = Seconds(5);
  // Longer: an Apply that answers late has still changed the engine, and the Decision should
  // say what it did; the other workloads' applies are not waiting for it (they run beside it).
  Duration apply_deadline = Seconds(10);
};

// Apply, or ApplyTiers when asleep >= 0. An engine without a warm tier (ApplyTiers answers
// kInvalid) serves the awake size alone: Apply, unless that is `current` already, with
// `tier_off` saying why the tier is off.
Status ApplyScale(Actuator& engine, const WorkloadRef& ref, int awake, int asleep, int current,
                  std::string& tier_off);

class EngineCalls {
 public:
  struct Call {
    Actuator* engine = nullptr;
    WorkloadRef ref;   // a copy: a call may outlive the workload's binding
    int desired = 0;   // Apply's
    int asleep = -1;   // ApplyTiers' asleep replicas; -1: Apply alone
    int current = -1;  // the awake size now, if known (ApplyScale's)
  };

  explicit EngineCalls(EngineCallOptions options);
  ~EngineCalls();
  EngineCalls(const EngineCalls&) = delete;
  EngineCalls& operator=(const EngineCalls&) = delete;

  // One answer per call, in order.
  std::vector<Result<ScaleState>> Observe(const std::vector<Call>& calls);
  // `tier_off`, when given, gets one entry per call: why its warm tier was off (ApplyScale).
  std::vector<Status> Apply(const std::vector<Call>& calls,
                            std::vector<std::string>* tier_off = nullptr);
  // Waits for workload `key`'s call still in flight, if any: its binding (and perhaps its
  // engine) is about to go.
  void Settle(const std::string& key);
  // Calls past their deadline and not yet ended (tests, /metrics).
  size_t Late() const;

 private:
  struct Pending;
  using Clock = std::chrono::steady_clock;  // a real wait on real threads, not a decision input
  std::vector<std::shared_ptr<Pending>> Start(const std::vector<Call>& calls, bool apply,
                                              std::vector<std::string>& busy);
  void Await(const std::vector<std::shared_ptr<Pending>>& ps, Clock::time_point until);
  // Starts `calls` and waits up to `deadline`: an answered call's Pending, or null with
  // why[i] saying why there is no answer.
  std::vector<std::shared_ptr<Pending>> Run(const std::vector<Call>& calls, bool apply,
                                            Duration deadline, std::vector<Status>& why);
  std::string Unanswered(const Pending& p, Duration deadline) const;
  Executor& PoolOf(const std::string& engine);

  EngineCallOptions options_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  // Workload key -> its call that outlived a deadline (running, or finished since).
  std::unordered_map<std::string, std::shared_ptr<Pending>> late_;
  // Last, so that it goes first: the threads stop before what they use.
  std::unordered_map<std::string, std::unique_ptr<ThreadPoolExecutor>> pools_;
};

}  // namespace aiscale::control
