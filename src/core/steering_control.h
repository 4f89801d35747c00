// SteeringControl: the seam through which an operator steers a running controller (pause,
// resume, pin, unpin), so the HTTP API (server/) can steer without seeing the Controller.
//
// Contract: Apply validates, then records the change durably (the override and a Decision
// that says what was done, "paused by API", in one Store commit) before it takes effect and
// before it returns; the next tick of that workload obeys it. Errors: kNotFound (no such
// workload), kInvalid (the request breaks a rule: a pin beyond max_replicas, with the reason),
// kConflict (unpin of a workload that is not pinned), kUnavailable (the controller has not
// ticked yet, or the store failed: nothing changed). Thread-safe; may be called from any thread.
#pragma once

#include <string>

#include "core/result.h"
#include "core/steering.h"

namespace aiscale {

enum class SteerOp { kPause, kResume, kPin, kUnpin };

struct SteerRequest {
  SteerOp op = SteerOp::kPause;
  std::string workload;  // a key (namespace/name) or a plain name only one workload has
  PauseDirection direction = PauseDirection::kBoth;  // kPause
  int replicas = 0;                                  // kPin
  WallTime until{};                                  // kPause, kPin; the epoch: until cleared
};

struct SteerOutcome {
  std::string workload;  // the key it resolved to
  Steering steering;     // in force after the call (mode kNone after resume/unpin)
  std::string message;   // what was done, as the recorded Decision says it
};

class SteeringControl {
 public:
  virtual ~SteeringControl() = default;
  virtual Result<SteerOutcome> Apply(const SteerRequest& request) = 0;
};

}  // namespace aiscale
