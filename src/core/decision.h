// Decision: the record of one tick for one workload: what was seen, recommended, stabilized,
// constrained and done, and why. Made every tick; a Store may keep only the ticks where
// something changed plus heartbeats (unchanged_ticks > 0) that stand for the ticks between.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/policy.h"
#include "core/result.h"
#include "core/time.h"
#include "core/workload_signals.h"

namespace aiscale {

struct SignalInput {
  std::string name;
  SignalStatus status = SignalStatus::kMissing;
  double value = 0;  // mean over instances when ok
  double sum = 0;
  int instances = 0;
  std::string detail;
};

// What the shared GPU pool did with the workload's wish this tick (decide/allocator.h). Active
// only for a workload in a pool; `constrained` is then the grant and `wanted` what the
// workload's own pipeline asked for.
struct PoolOutcome {
  bool active = false;
  int wanted = 0;
  int granted = 0;
  std::string tenant;
  std::string reason;  // as_wanted, guarantee, borrowed, reclaimed, shrunk, pool_full, ...
  std::string detail;  // the reason with names and numbers
  bool operator==(const PoolOutcome&) const = default;
};

enum class Action { kNone, kScaled, kFailed };
std::string_view ActionName(Action a);

struct Decision {
  std::string workload;
  std::string policy;
  TimePoint at{};   // the clock's monotonic time (wall-anchored in the daemon: see time.h)
  WallTime wall{};  // wall time of the tick; the epoch (unset) in the simulator
  int current = 0;
  int ready = 0;
  int asleep = 0;             // replicas the engine keeps asleep (the warm tier)
  std::string engine_detail;  // what the engine said about its replicas (ScaleState::detail)
  std::vector<SignalInput> inputs;
  Recommendation recommendation;
  int stabilized = 0;
  std::string stabilize_reason;
  int constrained = 0;
  std::string constrain_reason;
  bool vetoed = false;  // a scale-down was refused because a required signal had no data
  PoolOutcome pool;
  Action action = Action::kNone;
  StatusCode action_code = StatusCode::kOk;  // the error kind when action is kFailed
  std::string action_detail;
  // A heartbeat record (set by a Store that keeps changes only): this tick's decision stands
  // for unchanged_ticks ticks, this one included, with the same outcome as the record stored
  // unchanged_for before it. 0 on every decision as made.
  int unchanged_ticks = 0;
  Duration unchanged_for{};
  // "unchanged for K ticks since <time>" for a heartbeat record; empty otherwise.
  std::string UnchangedText() const;
  // The whole story in one line, for logs and the API.
  std::string Summary() const;
};

nlohmann::json ToJson(const Decision& d);

}  // namespace aiscale
