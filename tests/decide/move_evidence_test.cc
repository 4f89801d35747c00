#include "decide/training/move_evidence.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

// Readings at `nodes`: `count` of them alternating mean * (1 +- spread), 3 s each.
void Read(ThroughputModel& m, int nodes, double mean, double spread, int count) {
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(m.Add(nodes, mean * (i % 2 ? 1 + spread : 1 - spread), 3));
  }
}

TEST(MoveEvidence, BacksAMoveOnlyBeyondTheNoise) {
  struct Case {
    std::string name;
    double mean2, spread2;
    int count2;
    double mean3, spread3;
    int count3;
    int from, to;
    bool per_node;
    bool judged;
    bool backs;  // at z >= 3
  };
  const std::vector<Case> cases = {
      // elastic_learn: 3 agents slower than 2 on this machine.
      {"shrink 3 -> 2, measured faster per node", 939, 0.02, 10, 541, 0.03, 20, 3, 2, true, true,
       true},
      {"grow 2 -> 3 for time, measured slower", 939, 0.02, 10, 541, 0.03, 20, 2, 3, false, true,
       false},
      // One noisy reading at 2 took its mean below 3's, but the spread it added is larger.
      {"2 dragged down by noise: not beyond it", 520, 0.45, 4, 541, 0.03, 20, 2, 3, false, true,
       false},
      {"3 genuinely faster, well measured", 600, 0.03, 20, 900, 0.03, 20, 2, 3, false, true, true},
      {"3 faster by less than the noise", 880, 0.2, 6, 900, 0.2, 6, 2, 3, false, true, false},
      {"3 never measured: the prior's call", 939, 0.02, 10, 0, 0, 0, 2, 3, false, false, true},
      {"2 not measured yet: measure it first", 0, 0, 0, 541, 0.03, 20, 2, 3, false, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ThroughputModel m;
    Read(m, 2, c.mean2, c.spread2, c.count2);
    Read(m, 3, c.mean3, c.spread3, c.count3);
    const MoveEvidence e = JudgeMove(m, c.from, c.to, c.per_node);
    EXPECT_EQ(e.judged, c.judged);
    EXPECT_EQ(e.Backs(3), c.backs) << e.Text();
    EXPECT_FALSE(e.Text().empty());
    if (e.judged) {
      EXPECT_NE(e.Text().find("z = "), std::string::npos) << e.Text();
    }
  }
}

TEST(MoveEvidence, ReadingsWithoutSpreadDecideByTheirSign) {
  // The simulator without noise: every reading at a size is the same, so the standard error
  // is 0 and any difference is beyond it.
  ThroughputModel m;
  Read(m, 2, 900, 0, 5);
  Read(m, 3, 1000, 0, 5);
  EXPECT_EQ(JudgeMove(m, 2, 3, false).z, kHugeZ);
  EXPECT_TRUE(JudgeMove(m, 2, 3, false).Backs(3));
  EXPECT_EQ(JudgeMove(m, 3, 2, false).z, -kHugeZ);
  // Per node, 2 is the better one (450 vs 333 samples/s per node).
  EXPECT_TRUE(JudgeMove(m, 3, 2, true).Backs(3));
  EXPECT_NE(JudgeMove(m, 3, 2, true).Text().find("per node"), std::string::npos);
}

}  // namespace
}  // namespace aiscale::decide
