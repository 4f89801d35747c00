// SizePlanner with a shared pool's lease: a growth onto lent GPUs is priced for as long as the
// pool's loans last, with the restart back when the lender takes them, not to the job's end.
#include "decide/training/size_planner.h"

#include <gtest/gtest.h>

namespace aiscale::decide {
namespace {

// A job far from its end on 1 node, that scales linearly to 4 (reference 4), so staying at 1
// misses its budget and every growth wins time while it lasts; restarts cost 60 s.
PlanInput Job() {
  PlanInput in;
  in.current = 1;
  in.reference = 4;
  in.sizes = {1, 2, 3, 4};
  in.remaining_samples = 1e6;
  in.y_job = [](int n) { return 1.0 / n; };
  in.restart_s = 60;
  in.max_slowdown = 0.1;
  in.gain_margin = 0.5;
  return in;
}

struct Case {
  std::string name;
  int lease_from;
  std::optional<double> lease_s;
  PlanVerdict want;
  int first;  // the size chosen now (with kRescale)
  int then;   // and after the loan
};

TEST(SizePlanner, AGrowthOntoLentGpusLastsAsLongAsTheLoans) {
  const std::vector<Case> cases = {
      {"no loan measured: grown to the end", 1, std::nullopt, PlanVerdict::kRescale, 4, 4},
      // 4 nodes for 100 s: 40 s of work at 4x (160 s at 1), then a 60 s restart back: the
      // job ends when it would have staying; 105 s saves 15 s, short of 1.5 restarts.
      {"a loan no longer than both restarts wins nothing", 1, 100, PlanVerdict::kHoldNoBetterSize,
       0, 0},
      {"a loan that wins less than its restarts' margin", 1, 105, PlanVerdict::kHoldGainTooSmall, 0,
       0},
      {"a long loan is taken, and the plan says it ends", 1, 1000, PlanVerdict::kRescale, 4, 1},
      {"GPUs of its own tenant are no loan", 4, 100, PlanVerdict::kRescale, 4, 4},
      {"the way back is to the secure size", 2, 1000, PlanVerdict::kRescale, 4, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PlanInput in = Job();
    in.lease_from = c.lease_from;
    in.lease_s = c.lease_s;
    const PlanResult r = PlanSize(in);
    EXPECT_EQ(static_cast<int>(r.verdict), static_cast<int>(c.want))
        << "gain " << r.gain << " needed " << r.needed;
    if (c.want == PlanVerdict::kRescale) {
      EXPECT_EQ(r.chosen.first, c.first);
      EXPECT_EQ(r.chosen.then, c.then);
    }
  }
}

// With no other size allowed (a pool with no room), a job that misses its budget is not
// called "the cheapest that finishes in time".
TEST(SizePlanner, OnlyTheCurrentSizeAllowedAndTooSlowSaysSo) {
  PlanInput in = Job();
  in.sizes = {1};
  EXPECT_EQ(static_cast<int>(PlanSize(in).verdict),
            static_cast<int>(PlanVerdict::kHoldNoBetterSize));
  in.reference = 1;  // now in time at 1
  EXPECT_EQ(static_cast<int>(PlanSize(in).verdict), static_cast<int>(PlanVerdict::kHoldAtBest));
}

TEST(SizePlanner, ALoanPricesBothRestarts) {
  PlanInput in = Job();
  in.lease_from = 1;
  in.lease_s = 1000;
  const PlanResult r = PlanSize(in);
  ASSERT_TRUE(r.has_change);
  // 940 s at 4 nodes does 3760 samples; back at 1 node after a second restart.
  EXPECT_DOUBLE_EQ(r.chosen.time_s, 1000 + 60 + (1e6 - 3760));
  EXPECT_DOUBLE_EQ(r.gain, 1e6 - (r.chosen.time_s - 60));
}

}  // namespace
}  // namespace aiscale::decide
