// Pause and pin: a person's hold on a workload (on Kubernetes, the AIScaler annotations
// aiscale.dev/paused, paused-scale-down, paused-scale-up and paused-replicas, as KEDA's
// autoscaling.keda.sh/paused and paused-replicas), applied as the last constraint, after
// min/max and capacity.
//
// Why a constraint: the policy and stabilizer still run, so windows and learned state stay
// current, and the Decision shows what the workload would have done and that the hold stopped
// it (constrain_reason). A pin holds exactly N replicas, min/max notwithstanding: the person
// asked for N. Like every constraint it applies only to a valid recommendation: while signals
// are missing the workload holds its size, pinned or not. Pure; immutable.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/policy.h"
#include "core/result.h"

namespace aiscale::decide {

struct PauseSpec {
  bool paused = false;         // hold the current size
  bool no_scale_down = false;  // never below the current size
  bool no_scale_up = false;    // never above it
  std::optional<int> pinned;   // exactly this many replicas (wins over the rest)
  std::string source;          // where it came from, for reasons: "annotation aiscale.dev/paused"

  bool any() const { return paused || no_scale_down || no_scale_up || pinned.has_value(); }
  // "paused", "pinned at 3", "scale-down paused", "scale-up paused", or "" when none.
  std::string Summary() const;
};

// The annotation names (prefix aiscale.dev/).
inline constexpr const char* kPausedAnnotation = "aiscale.dev/paused";
inline constexpr const char* kPausedScaleDownAnnotation = "aiscale.dev/paused-scale-down";
inline constexpr const char* kPausedScaleUpAnnotation = "aiscale.dev/paused-scale-up";
inline constexpr const char* kPausedReplicasAnnotation = "aiscale.dev/paused-replicas";

// Reads the four annotations through `get` (nullopt: absent). "true"/"false" for the flags,
// a whole number 0..1,000,000 for paused-replicas; anything else is kInvalid naming the
// annotation and the value, and the caller then holds the workload (a hold half-read must not
// turn into a scale).
Result<PauseSpec> ParsePauseAnnotations(
    const std::function<std::optional<std::string>(const std::string&)>& get);

class PausedConstraints final : public Constrainer {
 public:
  // `inner` may be null (no other constraint).
  PausedConstraints(std::shared_ptr<const Constrainer> inner, PauseSpec pause)
      : inner_(std::move(inner)), pause_(std::move(pause)) {}
  ConstrainResult Constrain(int desired, int current,
                            std::optional<int> max_available) const override;
  const PauseSpec& pause() const { return pause_; }

 private:
  std::shared_ptr<const Constrainer> inner_;
  PauseSpec pause_;
};

}  // namespace aiscale::decide
