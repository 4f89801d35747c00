// Constraints: the sizes a workload may have, applied after stabilization.
//
// Promises: the result is within [min_replicas, max_replicas] (or 0 when scale to zero is
// allowed and asked for), a multiple of `granularity` (a model-parallel group), and not above
// what the engine says it can host now, rounded down to the granularity, unless that is below
// the current size: free capacity limits growth only. The reason names every bound that
// changed the value.
#pragma once

#include <optional>

#include "core/config/config_node.h"
#include "core/policy.h"

namespace aiscale::decide {

struct ConstraintsConfig {
  int min_replicas = 1;
  int max_replicas = 100;
  int granularity = 1;  // multiple of the model-parallel group size
  bool allow_scale_to_zero = false;

  // Reads min_replicas, max_replicas, granularity, scale_to_zero from a workload spec node;
  // cross-field errors (min > max, granularity not dividing max or min) are recorded there.
  static ConstraintsConfig Parse(const config::ConfigNode& spec);
};

class Constraints final : public Constrainer {
 public:
  explicit Constraints(ConstraintsConfig c) : c_(c) {}
  ConstrainResult Constrain(int desired, int current,
                            std::optional<int> max_available) const override;
  const ConstraintsConfig& config() const { return c_; }

 private:
  ConstraintsConfig c_;
};

}  // namespace aiscale::decide
