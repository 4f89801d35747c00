#include "decide/serving/lead_learner.h"

#include <vector>

#include <gtest/gtest.h>

#include "core/state.h"

namespace aiscale::decide::serving {
namespace {

// Both learners see the same ticks, 15 s apart: the cold-start one (prior 300 s) times rises
// the warm tier did not pay for, the wake one (prior 5 s) only rises paid for by sleepers that
// were asleep (loaded) while every earlier replica was ready. A measurement moves an estimate a
// third of the way.
TEST(LeadLearner, TimesColdStartsAndWakesApart) {
  struct Row {
    const char* name;
    std::vector<LeadLearner::Counts> ticks;  // current, ready, asleep, asleep_ready
    int cold_n;
    double cold_s;
    int wake_n;
    double wake_s;
  };
  const Row rows[] = {
      {"a cold start: 2 -> 4, ready 60 s later",
       {{2, 2, 0, 0}, {4, 2, 0, 0}, {4, 2, 0, 0}, {4, 3, 0, 0}, {4, 3, 0, 0}, {4, 4, 0, 0}},
       1,
       300 + (60 - 300) / 3.0,
       0,
       5},
      {"a wake: 2 of 3 sleepers woken, ready 15 s later",
       {{2, 2, 3, 3}, {4, 2, 1, 1}, {4, 4, 1, 1}},
       0,
       300,
       1,
       5 + (15 - 5) / 3.0},
      {"one woken and two started cold: neither",
       {{2, 2, 1, 1}, {5, 2, 0, 0}, {5, 3, 0, 0}, {5, 3, 0, 0}, {5, 5, 0, 0}},
       0,
       300,
       0,
       5},
      {"woken while a cold start is pending: neither",
       {{2, 2, 2, 2}, {3, 2, 2, 2}, {5, 2, 0, 0}, {5, 4, 0, 0}, {5, 5, 0, 0}},
       0,
       300,
       0,
       5},
      {"woken while still loading toward sleep: neither (the rest of a cold start)",
       {{2, 2, 3, 0}, {4, 2, 1, 0}, {4, 2, 1, 0}, {4, 3, 1, 1}, {4, 3, 1, 1}, {4, 4, 1, 1}},
       0,
       300,
       0,
       5},
      {"the tier shrank while a cold start is pending: still timed",
       {{2, 2, 1, 1}, {4, 2, 1, 1}, {4, 2, 0, 0}, {4, 3, 0, 0}, {4, 3, 0, 0}, {4, 4, 0, 0}},
       1,
       300 + (60 - 300) / 3.0,
       0,
       5},
      {"a woken sleeper replaced by one loading: a wake, not a cold start",
       {{2, 2, 2, 2}, {3, 2, 2, 1}, {3, 3, 2, 1}},
       0,
       300,
       1,
       5 + (15 - 5) / 3.0},
      {"put back to sleep before ready: nothing",
       {{2, 2, 3, 3}, {4, 2, 1, 1}, {2, 2, 3, 3}, {2, 2, 3, 3}},
       0,
       300,
       0,
       5},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    PersistentState state;
    LeadLearner cold(300, state, "s.");
    LeadLearner wake(5, state, "s.", LeadLearner::Kind::kWake);
    double t = 0;
    for (const LeadLearner::Counts& c : row.ticks) {
      t += 15;
      cold.Observe(c, t);
      wake.Observe(c, t);
    }
    EXPECT_EQ(cold.measurements(), row.cold_n);
    EXPECT_NEAR(cold.estimate(), row.cold_s, 1e-9);
    EXPECT_EQ(wake.measurements(), row.wake_n);
    EXPECT_NEAR(wake.estimate(), row.wake_s, 1e-9);
  }
}

}  // namespace
}  // namespace aiscale::decide::serving
