// Steering: an operator's override of one workload's scaling, and the pure rule that applies
// it to what the pipeline (policy → stabilizer → constraints) decided.
//
// Why in core: the Controller applies it between constrain and act, the API sets it
// (server/), and Kubernetes pause annotations (act/) map onto the same struct, and none of
// those layers may depend on each other. The modes follow KEDA's pause annotations:
//   paused, direction both   autoscaling.keda.sh/paused: "true"       hold the current size
//   paused, direction down   autoscaling.keda.sh/paused-scale-in      never shrink
//   paused, direction up     autoscaling.keda.sh/paused-scale-out     never grow
//   pinned to N              autoscaling.keda.sh/paused-replicas: N   hold N, whatever is asked
// A pause or pin may carry an end time; past it the override no longer binds.
//
//   SteerResult r = Steer(s, d.current, d.constrained, min, max, wall_now);
//   if (!r.note.empty()) { d.constrained = r.desired; ... r.note ... }
//
// Pure: no clock, no I/O; everything is a parameter. Thread safety: plain values.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/state.h"
#include "core/time.h"

namespace aiscale {

enum class SteerMode { kNone, kPaused, kPinned };
enum class PauseDirection { kBoth, kDown, kUp };
// Who set it; said in every Decision it shapes ("paused by API").
enum class SteerSource { kApi, kAnnotation };

struct Steering {
  SteerMode mode = SteerMode::kNone;
  PauseDirection direction = PauseDirection::kBoth;  // kPaused only
  int replicas = 0;                                  // kPinned only
  SteerSource source = SteerSource::kApi;
  WallTime since{};
  WallTime until{};  // the epoch: until cleared

  // True while it binds: a mode is set and `until` is unset or after `now`.
  bool ActiveAt(WallTime now) const;
  // "paused by API (scale-down only) since 2026-...Z until 2026-...Z", "pinned by API to 2 ...",
  // "none".
  std::string Describe() const;
  bool operator==(const Steering&) const = default;
};

struct SteerResult {
  int desired = 0;    // the size to act on
  bool held = false;  // the override changed what the pipeline asked for
  std::string note;   // why, for the Decision; empty when no override is active
};

// What to act on, given an override, the current size and the pipeline's `constrained` size.
// A pin outside [min_replicas, max_replicas] (the bounds changed after it was set) is clamped
// into them, and the note says so.
SteerResult Steer(const Steering& s, int current, int constrained, int min_replicas,
                  int max_replicas, WallTime now);

// kInvalid with the reason when a pin to `replicas` is outside the workload's bounds.
Status CheckPin(int replicas, int min_replicas, int max_replicas);

std::string_view PauseDirectionName(PauseDirection d);  // "both", "down", "up"
Result<PauseDirection> PauseDirectionFromName(std::string_view name);
std::string_view SteerModeName(SteerMode m);      // "none", "paused", "pinned"
std::string_view SteerSourceName(SteerSource s);  // "API", "annotation"

// An end time from a duration ("90s", "30m", "2h", "1d") after `now`, or an RFC 3339 UTC time
// ("2026-12-03T05:30:00Z", fraction allowed). kInvalid naming the text otherwise, or when the
// time is not after `now`.
Result<WallTime> ParseUntil(std::string_view text, WallTime now);

// Persistence through the Store's state records (plain numbers, so no new schema).
PersistentState SteeringToState(const Steering& s);
// An empty state (nothing saved) is Steering{}; a state from an unknown future layout is an error.
Result<Steering> SteeringFromState(const PersistentState& st);

}  // namespace aiscale
