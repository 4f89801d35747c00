// ChangeFilter: which changes make a Store write a decision, and what heartbeats stand for.
#include "store/change_filter.h"

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/store_test_util.h"

namespace aiscale::store {
namespace {

// A steady tick: nothing scaled, every signal ok.
Decision Steady(double t_s) {
  Decision d = aiscale::testing::FullDecision("ns/w", t_s, 0);
  d.action = Action::kNone;
  d.recommendation.valid = true;
  for (SignalInput& in : d.inputs) in.status = SignalStatus::kOk;
  return d;
}

TEST(ChangeFilter, WhichFieldChangesCauseAWrite) {
  struct Case {
    const char* name;
    std::function<void(Decision&)> change;
    bool stored;
  };
  const std::vector<Case> cases = {
      {"nothing", [](Decision&) {}, false},
      {"a signal's value", [](Decision& d) { d.inputs[0].value += 7; }, false},
      {"a signal's sum and instances' mean", [](Decision& d) { d.inputs[0].sum *= 2; }, false},
      {"a signal's detail text", [](Decision& d) { d.inputs[1].detail = "age 3 s"; }, false},
      {"the reason's numbers", [](Decision& d) { d.recommendation.reason += " 0.51"; }, false},
      {"a fact", [](Decision& d) { d.recommendation.facts[0].second = 9; }, false},
      {"the stabilize reason's text", [](Decision& d) { d.stabilize_reason = "x"; }, false},
      {"the action detail of no action", [](Decision& d) { d.action_detail = "y"; }, false},
      {"the time", [](Decision& d) { d.at += Seconds(15); }, false},
      {"current", [](Decision& d) { ++d.current; }, true},
      {"ready", [](Decision& d) { --d.ready; }, true},
      {"recommended", [](Decision& d) { ++d.recommendation.desired; }, true},
      {"validity", [](Decision& d) { d.recommendation.valid = false; }, true},
      {"rule", [](Decision& d) { d.recommendation.rule = "hold"; }, true},
      {"stabilized", [](Decision& d) { ++d.stabilized; }, true},
      {"constrained", [](Decision& d) { ++d.constrained; }, true},
      {"binding limit", [](Decision& d) { d.constrain_reason = "capped at capacity 6"; }, true},
      {"vetoed", [](Decision& d) { d.vetoed = true; }, true},
      {"action scaled", [](Decision& d) { d.action = Action::kScaled; }, true},
      {"action failed", [](Decision& d) { d.action = Action::kFailed; }, true},
      {"error kind", [](Decision& d) { d.action_code = StatusCode::kUnavailable; }, true},
      {"signal goes missing", [](Decision& d) { d.inputs[1].status = SignalStatus::kMissing; },
       true},
      {"signal goes stale", [](Decision& d) { d.inputs[0].status = SignalStatus::kStale; }, true},
      {"signal fetch fails", [](Decision& d) { d.inputs[2].status = SignalStatus::kFetchFailed; },
       true},
      {"a signal more",
       [](Decision& d) {
         d.inputs.push_back({"epoch", SignalStatus::kOk, 0, 0, 0, ""});
       },
       true},
      {"signals renamed", [](Decision& d) { d.inputs[0].name = "gpu"; }, true},
      {"policy", [](Decision& d) { d.policy = "kpa"; }, true},
      {"engine detail", [](Decision& d) { d.engine_detail = "1 pending"; }, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Decision a = Steady(0);
    Decision b = Steady(15);
    c.change(b);
    EXPECT_EQ(ChangeFilter::Changed(a, b), c.stored);
    // The same through the filter: the first is stored, the second only when changed.
    ChangeFilter f(Seconds(300));
    EXPECT_EQ(f.Consider(a).verdict, ChangeFilter::Verdict::kChanged);
    EXPECT_EQ(f.Consider(b).verdict,
              c.stored ? ChangeFilter::Verdict::kChanged : ChangeFilter::Verdict::kSkip);
  }
}

TEST(ChangeFilter, ARepeatedScaleIsAlwaysStored) {
  Decision a = Steady(0);
  a.action = Action::kScaled;
  Decision b = a;
  b.at += Seconds(15);
  EXPECT_TRUE(ChangeFilter::Changed(a, b));
}

TEST(ChangeFilter, HeartbeatsCountTheUnchangedTicksTheyStandFor) {
  ChangeFilter f(Seconds(300));
  using V = ChangeFilter::Verdict;
  struct Step {
    int tick;  // 15 s each
    bool change;
    V want;
    int ticks;  // for a heartbeat
    double since_s;
    bool gap_before = false;  // the ticks before this one never ran (the daemon was down)
  };
  const std::vector<Step> steps = {
      {0, false, V::kChanged, 0, 0},
      {1, false, V::kSkip, 0, 0},
      {19, false, V::kSkip, 0, 0},
      {20, false, V::kHeartbeat, 20, 300},
      {21, false, V::kSkip, 0, 0},
      {40, false, V::kHeartbeat, 20, 300},
      {45, true, V::kChanged, 0, 0},
      {46, false, V::kSkip, 0, 0},
      {64, false, V::kSkip, 0, 0},
      {65, false, V::kHeartbeat, 20, 300},
      {85, false, V::kHeartbeat, 20, 300},
      // Only ticks that ran are counted; the time says how long it was.
      {120, false, V::kHeartbeat, 1, 525, true},
  };
  int replicas = 4;
  for (const Step& s : steps) {
    SCOPED_TRACE("tick " + std::to_string(s.tick));
    Decision d = Steady(15.0 * s.tick);
    if (s.change) ++replicas;
    d.current = replicas;
    const ChangeFilter::Offer o = f.Consider(d);
    EXPECT_EQ(o.verdict, s.want);
    if (s.want == V::kHeartbeat) {
      EXPECT_EQ(o.ticks, s.ticks);
      EXPECT_EQ(o.since, Seconds(s.since_s));
      const Decision h = ChangeFilter::Stamp(d, o);
      EXPECT_EQ(h.unchanged_ticks, s.ticks);
      const std::string ticks = std::to_string(s.ticks) + (s.ticks == 1 ? " tick" : " ticks");
      EXPECT_NE(h.Summary().find("unchanged for " + ticks + " since"), std::string::npos)
          << h.Summary();
    }
    // Feed the ticks between this step and the next one, all unchanged.
    const size_t i = static_cast<size_t>(&s - steps.data());
    if (i + 1 < steps.size()) {
      const Step& next = steps[i + 1];
      for (int t = s.tick + 1; t < next.tick && !next.gap_before; ++t) {
        Decision between = Steady(15.0 * t);
        between.current = replicas;
        EXPECT_EQ(f.Consider(between).verdict, V::kSkip) << "tick " << t;
      }
    }
  }
}

TEST(ChangeFilter, ZeroHeartbeatKeepsEveryDecision) {
  ChangeFilter f;
  for (int t = 0; t < 5; ++t) {
    EXPECT_EQ(f.Consider(Steady(15.0 * t)).verdict, ChangeFilter::Verdict::kChanged);
  }
}

TEST(ChangeFilter, AForgottenWorkloadIsStoredAgain) {
  ChangeFilter f(Seconds(300));
  EXPECT_EQ(f.Consider(Steady(0)).verdict, ChangeFilter::Verdict::kChanged);
  EXPECT_EQ(f.Consider(Steady(15)).verdict, ChangeFilter::Verdict::kSkip);
  f.Forget("ns/w");
  EXPECT_EQ(f.Consider(Steady(30)).verdict, ChangeFilter::Verdict::kChanged);
}

// A store passes each decision's place in its batch; a writer that changes its order (a
// workload added, removed or moved) must get the verdicts a lookup by name gives.
TEST(ChangeFilter, VerdictsByPositionAreTheVerdictsByName) {
  struct Case {
    const char* name;
    std::vector<std::vector<int>> batches;  // workload numbers, in batch order
  };
  const std::vector<Case> cases = {
      {"same order", {{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}},
      {"two swapped", {{0, 1, 2}, {0, 1, 2}, {1, 0, 2}, {1, 0, 2}, {0, 1, 2}}},
      {"one removed, one added", {{0, 1, 2}, {0, 2}, {0, 2, 3}, {0, 1, 2, 3}, {1}}},
      {"reversed", {{0, 1, 2, 3}, {3, 2, 1, 0}, {0, 1, 2, 3}, {3, 2, 1, 0}}},
      {"forget between", {{0, 1, 2}, {0, 1, 2}, {-1}, {0, 1, 2}, {0, 1, 2}}},  // -1: Forget 1
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ChangeFilter by_position(Seconds(45)), by_name(Seconds(45));
    for (size_t t = 0; t < c.batches.size(); ++t) {
      if (c.batches[t] == std::vector<int>{-1}) {
        by_position.Forget("ns/w1");
        by_name.Forget("ns/w1");
        continue;
      }
      for (size_t pos = 0; pos < c.batches[t].size(); ++pos) {
        const int w = c.batches[t][pos];
        Decision d = Steady(15.0 * static_cast<double>(t));
        d.workload = "ns/w" + std::to_string(w);
        d.current = 1 + w + (t % 3 == 2 && w == 0 ? 1 : 0);  // w0 changes now and then
        const ChangeFilter::Offer a = by_position.Consider(d, pos), b = by_name.Consider(d);
        EXPECT_EQ(a.verdict, b.verdict) << "batch " << t << ", " << d.workload;
        EXPECT_EQ(a.ticks, b.ticks) << "batch " << t << ", " << d.workload;
      }
    }
  }
}

}  // namespace
}  // namespace aiscale::store
