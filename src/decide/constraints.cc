#include "decide/constraints.h"

#include <algorithm>
#include <string>

namespace aiscale::decide {

ConstraintsConfig ConstraintsConfig::Parse(const config::ConfigNode& spec) {
  ConstraintsConfig c;
  // kMaxReplicaCount (core/numeric.h): policies saturate there, so sums stay in int range.
  c.min_replicas = spec.Int("min_replicas", c.min_replicas, config::Between(0, kMaxReplicaCount));
  c.max_replicas = spec.Int("max_replicas", c.max_replicas, config::Between(1, kMaxReplicaCount));
  c.granularity = spec.Int("granularity", c.granularity, config::Between(1, kMaxReplicaCount));
  c.allow_scale_to_zero = spec.Bool("scale_to_zero", c.allow_scale_to_zero);
  if (c.min_replicas > c.max_replicas) {
    spec.ErrorAt("min_replicas", "min_replicas (" + std::to_string(c.min_replicas) +
                                     ") must be <= max_replicas (" +
                                     std::to_string(c.max_replicas) + ")");
  }
  if (c.max_replicas % c.granularity != 0) {
    spec.ErrorAt("granularity", "granularity " + std::to_string(c.granularity) +
                                    " does not divide max_replicas " +
                                    std::to_string(c.max_replicas));
  }
  if (c.min_replicas % c.granularity != 0) {
    spec.ErrorAt("granularity", "granularity " + std::to_string(c.granularity) +
                                    " does not divide min_replicas " +
                                    std::to_string(c.min_replicas));
  }
  if (c.min_replicas == 0 && !c.allow_scale_to_zero) {
    spec.ErrorAt("min_replicas", "min_replicas 0 needs scale_to_zero: true");
  }
  return c;
}

ConstrainResult Constraints::Constrain(int desired, int current,
                                       std::optional<int> max_available) const {
  ConstrainResult r{desired, ""};
  auto note = [&](const std::string& s) { r.reason += (r.reason.empty() ? "" : "; ") + s; };
  if (r.desired == 0 && c_.allow_scale_to_zero) return r;
  const int floor = std::max(c_.min_replicas, c_.allow_scale_to_zero ? 0 : 1);
  if (r.desired > c_.max_replicas) {
    note("capped at max_replicas " + std::to_string(c_.max_replicas));
    r.desired = c_.max_replicas;
  }
  if (r.desired % c_.granularity != 0) {
    // Round up: a partial group is useless, and the max is a multiple so this stays in range.
    const int up = (r.desired / c_.granularity + 1) * c_.granularity;
    note("rounded " + std::to_string(r.desired) + " up to a multiple of " +
         std::to_string(c_.granularity));
    r.desired = std::min(up, c_.max_replicas);
  }
  if (max_available && r.desired > *max_available) {
    // The free capacity limits growth only: what runs now already has its place (Slurm's
    // figure leaves out what pending jobs hold; rounding to a group could cut below current).
    const int cap =
        std::max((*max_available / c_.granularity) * c_.granularity, std::min(r.desired, current));
    if (cap < r.desired) {
      note("cluster can host " + std::to_string(*max_available) + ", capped at " +
           std::to_string(cap));
      r.desired = cap;
    }
  }
  if (r.desired < floor) {
    note("raised to min_replicas " + std::to_string(floor));
    r.desired = floor;
  }
  return r;
}

}  // namespace aiscale::decide
