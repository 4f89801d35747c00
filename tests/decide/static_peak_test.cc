// static-peak: a fixed size, given or the one it found; restored state that no tick wrote is
// found again, never read as 0 replicas.
#include "decide/policies/static_peak.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

TEST(StaticPeak, KeepsTheSizeItFoundAndNeverReadsGarbageAsZero) {
  struct Case {
    std::string name;
    std::optional<std::vector<double>> kept;  // restored "replicas"
    int want;
  };
  const std::vector<Case> cases = {
      {"fresh: the size it found", std::nullopt, 12},
      {"restored: the size kept", std::vector<double>{9}, 9},
      {"NaN", std::vector<double>{std::nan("")}, 12},
      {"negative", std::vector<double>{-3}, 12},
      {"empty", std::vector<double>{}, 12},
      {"two values", std::vector<double>{4, 5}, 12},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StaticPeakPolicy p(std::nullopt);
    PersistentState state;
    if (c.kept) state.Vec("replicas") = *c.kept;
    WorkloadSignals signals;
    PolicyInput in{signals, 12, 12, AtSeconds(100), std::nullopt, std::nullopt, std::nullopt, 0};
    const Recommendation r = p.Recommend(in, state);
    EXPECT_TRUE(r.valid);
    EXPECT_EQ(r.desired, c.want) << r.reason;
    in.current = in.ready = 3;  // later ticks keep it, whatever the engine says
    EXPECT_EQ(p.Recommend(in, state).desired, c.want);
  }
}

}  // namespace
}  // namespace aiscale::decide
