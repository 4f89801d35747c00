// The decide seams: Policy (what size is right), Stabilizer (how fast to get there) and
// Constrainer (what sizes are allowed).
//
// Contract: all three are pure and deterministic. They read `now` from their input, never
// from a clock, and do no I/O. Anything they learn goes into the PersistentState passed in,
// which the Controller persists. They are called from one thread per workload; an instance
// may be shared across workloads only if it keeps no state of its own (none do).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/state.h"
#include "core/time.h"
#include "core/workload_signals.h"

namespace aiscale {

struct PolicyInput {
  const WorkloadSignals& signals;
  int current = 0;  // spec'd replicas
  int ready = 0;    // ready replicas
  TimePoint now{};
  std::optional<int> max_available;  // from ScaleState
  // In a shared pool: what the pool granted at the last tick when it was less than the policy
  // asked (nullopt otherwise). A size the pool set is its limit, not a failure of the engine.
  std::optional<int> pool_limit;
  // In a shared pool, for an elastic workload: sizes above `secure` would run on GPUs lent by
  // other tenants, which the pool has taken back after `expected_s` on average (PoolLoans).
  // nullopt: not in a pool, or no loan measured yet.
  struct Lease {
    int secure = 0;
    double expected_s = 0;
  };
  std::optional<Lease> pool_lease;
  int asleep = 0;        // replicas kept asleep (ScaleState::asleep)
  int asleep_ready = 0;  // of them, asleep now (ScaleState::asleep_ready)
};

// A named number behind a decision ("predicted_gain_s", 412.0).
using Fact = std::pair<std::string, double>;

struct Recommendation {
  int desired = 0;
  // false: the policy could not decide (missing data, no history); the Controller then
  // keeps the current scale. A valid recommendation below current on missing data is a bug.
  bool valid = false;
  std::string rule;    // short id of the rule that fired, e.g. "replace_failed_nodes"
  std::string reason;  // one sentence with the numbers
  std::vector<Fact> facts;
  // Replicas to keep asleep as burst insurance (the warm tier), or -1: the policy does not use
  // one and the engine is only asked for `desired`.
  int asleep = -1;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view Name() const = 0;
  virtual Recommendation Recommend(const PolicyInput& in, PersistentState& state) const = 0;
  // Signals this policy reads; the Controller fetches these for the workload. All are
  // required: one without data vetoes a scale-down.
  virtual std::vector<std::string> Signals() const = 0;
  // Signals read only when present (e.g. a job's own `phase`); fetched too, never a veto.
  virtual std::vector<std::string> OptionalSignals() const { return {}; }
  // True when the policy applies its own rule to a partial `signal` (the HPA's pods without a
  // metric: Kubernetes assumes they use their target on a scale-down); the Controller then
  // does not veto a scale-down on that signal for being partial. Missing data still vetoes.
  virtual bool HandlesPartial(std::string_view signal) const {
    (void)signal;
    return false;
  }
  // What shrinking this workload from `from` to `to` replicas for about `horizon_s` would cost
  // in GPU-seconds of useful work (its restart plus the slowdown, as the policy models them),
  // so a shared pool takes GPUs back where the least progress is lost; nullopt when the policy
  // has no model of it. Pure, like Recommend.
  virtual std::optional<double> ShrinkCost(const PersistentState& state, int from, int to,
                                           double horizon_s, int gpus_per_replica) const {
    (void)state, (void)from, (void)to, (void)horizon_s, (void)gpus_per_replica;
    return std::nullopt;
  }
};

struct StabilizeResult {
  int desired = 0;
  std::string reason;
};

class Stabilizer {
 public:
  virtual ~Stabilizer() = default;
  // `recommended` is the policy's raw desire; returns what may be applied now.
  virtual StabilizeResult Stabilize(int recommended, int current, TimePoint now,
                                    PersistentState& state) const = 0;
  // Called after the Controller applied a change from `from` to `to` at `now`.
  virtual void RecordScale(int from, int to, TimePoint now, PersistentState& state) const = 0;
};

struct ConstrainResult {
  int desired = 0;
  std::string reason;  // empty when no constraint bound
};

class Constrainer {
 public:
  virtual ~Constrainer() = default;
  virtual ConstrainResult Constrain(int desired, int current,
                                    std::optional<int> max_available) const = 0;
};

}  // namespace aiscale
