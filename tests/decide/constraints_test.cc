// Constraints: bounds, granularity and the engine's free capacity, which limits growth only.
#include "decide/constraints.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

TEST(Constraints, BoundsGranularityAndCapacity) {
  struct Case {
    std::string name;
    int min, max, group;
    int desired, current;
    std::optional<int> available;
    int want;
    std::string reason_has;
  };
  const std::vector<Case> cases = {
      {"within bounds", 1, 10, 1, 5, 3, std::nullopt, 5, ""},
      {"capped at max", 1, 10, 1, 12, 3, std::nullopt, 10, "capped at max_replicas"},
      {"raised to min", 2, 10, 1, 1, 3, std::nullopt, 2, "raised to min_replicas"},
      {"rounded up to a group", 1, 16, 4, 5, 4, std::nullopt, 8, "rounded 5 up"},
      {"growth capped by free capacity", 1, 20, 1, 12, 4, 9, 9, "cluster can host 9"},
      {"growth capped to a whole group", 1, 20, 4, 12, 4, 10, 8, "capped at 8"},
      // Slurm's figure leaves out what pending jobs hold: a hold at 8 with 6 free must not
      // shrink the job (it went to 4, and with 0 free to 1).
      {"a hold is never cut by free capacity", 1, 20, 4, 8, 8, 6, 8, ""},
      {"no free capacity: holds", 1, 20, 1, 8, 8, 0, 8, ""},
      {"rounding up past current, capped back to current", 1, 20, 4, 7, 8, 7, 8, ""},
      {"a scale-down is not raised by the cap", 1, 20, 1, 3, 8, 2, 3, ""},
      {"growth past capacity stops at current", 1, 20, 1, 12, 8, 6, 8, "capped at 8"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ConstraintsConfig cfg;
    cfg.min_replicas = c.min;
    cfg.max_replicas = c.max;
    cfg.granularity = c.group;
    const ConstrainResult r = Constraints(cfg).Constrain(c.desired, c.current, c.available);
    EXPECT_EQ(r.desired, c.want) << r.reason;
    if (c.reason_has.empty()) {
      EXPECT_EQ(r.reason.find("cluster can host"), std::string::npos) << r.reason;
    } else {
      EXPECT_NE(r.reason.find(c.reason_has), std::string::npos) << r.reason;
    }
  }
}

}  // namespace
}  // namespace aiscale::decide
