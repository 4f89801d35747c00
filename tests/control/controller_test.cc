// Controller scenarios on SimClock with the fake source and actuator: the safety promises of
// controller.h (missing data never scales down, failures are recorded and contained, state
// survives a restart) and the order policy -> stabilizer -> constraints.
#include "control/controller.h"

#include <cmath>
#include <limits>
#include <memory>

#include <gtest/gtest.h>

#include "decide/constraints.h"
#include "decide/policies/static_policy.h"
#include "fakes/fake_actuator.h"
#include "fakes/fake_metric_source.h"
#include "sim/event_queue.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace aiscale::control {
namespace {

// What the daemon does each period: start the due fetches (inline here), then decide.
std::vector<Decision> CollectThenTick(Controller& ctl) {
  ctl.Collect();
  return ctl.Tick();
}

using aiscale::testing::FakeActuator;
using aiscale::testing::FakeMetricSource;

// desired = ceil(sum / target). Naive on purpose: it trusts the sum whatever the signal's
// status, so only the Controller's veto stands between missing data and a scale-down.
// Counts its ticks in its state, so persistence is visible.
class RatioPolicy final : public Policy {
 public:
  RatioPolicy(std::string signal, double target) : signal_(std::move(signal)), target_(target) {}
  std::string_view Name() const override { return "ratio"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override {
    state.Set("ticks", state.Get("ticks", 0) + 1);
    const double sum = in.signals.Get(signal_).sum;
    const int desired = static_cast<int>(std::ceil(sum / target_));
    return {desired, true, "ratio", "sum " + std::to_string(sum), {{"sum", sum}}};
  }
  std::vector<std::string> Signals() const override { return {signal_}; }

 private:
  std::string signal_;
  double target_;
};

// Moves at most `step` replicas per tick and remembers the last change it was told about.
class StepStabilizer final : public Stabilizer {
 public:
  explicit StepStabilizer(int step) : step_(step) {}
  StabilizeResult Stabilize(int recommended, int current, TimePoint now,
                            PersistentState& state) const override {
    (void)now;
    state.Set("calls", state.Get("calls", 0) + 1);
    const int d = std::clamp(recommended, current - step_, current + step_);
    return {d, d == recommended ? "" : "step limited to " + std::to_string(step_)};
  }
  void RecordScale(int from, int to, TimePoint now, PersistentState& state) const override {
    state.Set("from", from);
    state.Set("to", to);
    state.Set("at_s", SinceEpochSeconds(now));
  }

 private:
  int step_;
};

WorkloadBinding Bind(const std::string& name, std::unique_ptr<Policy> policy, Actuator* actuator,
                     MetricSource* source, std::vector<std::string> signals) {
  WorkloadBinding b;
  b.ref = {"Deployment", "ns", name};
  b.policy = std::move(policy);
  b.actuator = actuator;
  for (auto& s : signals) b.signals.push_back({s, "", source});
  return b;
}

WorkloadBinding Ratio(const std::string& name, Actuator* a, MetricSource* src) {
  return Bind(name, std::make_unique<RatioPolicy>("queue_len", 10), a, src, {"queue_len"});
}

std::unique_ptr<Policy> Static(int n) { return std::make_unique<decide::StaticPolicy>(n); }

TEST(Controller, BadSignalsNeverScaleDownAndSayWhy) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* name;
    std::function<void(FakeMetricSource&, TimePoint now)> script;
    SignalStatus status;
    std::string detail_part;
  };
  const std::vector<Case> cases = {
      {"missing", [](FakeMetricSource&, TimePoint) {}, SignalStatus::kMissing, "no observations"},
      {"stale",
       [](FakeMetricSource& s, TimePoint now) {
         s.Set("queue_len", {3});
         s.stamp = now - Seconds(46);
       },
       SignalStatus::kStale, "older than 45"},
      {"nan",
       [nan](FakeMetricSource& s, TimePoint) {
         s.Set("queue_len", {nan, nan});
       },
       SignalStatus::kInvalid, "NaN"},
      {"negative", [](FakeMetricSource& s, TimePoint) { s.Set("queue_len", {-4}); },
       SignalStatus::kInvalid, "out of range"},
      // Issue 27 §6: "0, NaN, NaN" read as ok with a sum of 0, and the workload went down.
      {"partly nan",
       [nan](FakeMetricSource& s, TimePoint) {
         s.Set("queue_len", {0, nan, nan});
       },
       SignalStatus::kPartial, "dropped 2 of 3"},
      {"fetch failed", [](FakeMetricSource& s, TimePoint) { s.failing["queue_len"] = true; },
       SignalStatus::kFetchFailed, "injected"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    sim::SimClock clock(AtSeconds(1000));
    FakeMetricSource source;
    FakeActuator actuator;
    actuator.Set("ns/w", 5, 5);
    c.script(source, clock.Now());
    Controller ctl(clock, nullptr);
    ASSERT_TRUE(ctl.Add(Ratio("w", &actuator, &source)).ok());
    const Decision d = CollectThenTick(ctl).at(0);
    EXPECT_TRUE(actuator.applies.empty());
    EXPECT_EQ(d.constrained, 5);
    EXPECT_EQ(d.action, Action::kNone);
    ASSERT_EQ(d.inputs.size(), 1u);
    EXPECT_EQ(d.inputs[0].name, "queue_len");
    EXPECT_EQ(d.inputs[0].status, c.status);
    EXPECT_NE(d.inputs[0].detail.find(c.detail_part), std::string::npos) << d.inputs[0].detail;
    const std::string veto =
        "scale-down vetoed: queue_len is " + std::string(SignalStatusName(c.status));
    EXPECT_NE(d.stabilize_reason.find(veto), std::string::npos) << d.stabilize_reason;
    EXPECT_NE(d.Summary().find("queue_len " + std::string(SignalStatusName(c.status))),
              std::string::npos)
        << d.Summary();
  }
}

// Series of instances the engine does not run (replicas stopped minutes ago, still served by
// Prometheus) are not pods: only the engine's replicas count, and the Decision says what was
// set aside. Issue 27 §6: 7 series with 1 replica scaled 7 -> 1, then 1 -> 2.
TEST(Controller, SeriesOfReplicasTheEngineDoesNotRunAreForeign) {
  sim::SimClock clock(AtSeconds(1000));
  FakeMetricSource source;
  FakeActuator actuator;
  actuator.Set("ns/w", 1, 1);
  actuator.endpoints["ns/w"] = {{"i0", "127.0.0.1", 8000, true}};
  source.Set("queue_len", {9, 9, 9, 9, 9, 9, 9});  // i0 .. i6
  Controller ctl(clock, nullptr);
  ASSERT_TRUE(ctl.Add(Ratio("w", &actuator, &source)).ok());
  const Decision d = CollectThenTick(ctl).at(0);
  ASSERT_EQ(d.inputs.size(), 1u);
  EXPECT_EQ(d.inputs[0].status, SignalStatus::kOk);
  EXPECT_EQ(d.inputs[0].instances, 1);
  EXPECT_DOUBLE_EQ(d.inputs[0].sum, 9);
  EXPECT_NE(d.inputs[0].detail.find("ignored 6 foreign series"), std::string::npos)
      << d.inputs[0].detail;
  EXPECT_EQ(d.constrained, 1);  // ceil(9 / 10): the one replica's load, not seven
  EXPECT_TRUE(actuator.applies.empty());
}

// A policy that applies its own rule to a partial signal (the HPA's pods without a metric)
// is not vetoed for it; one that does not is. The HPA is Kubernetes' algorithm: a pod whose
// value is missing is assumed at its target on a scale-down.
TEST(Controller, PartialSignalVetoesUnlessThePolicyHandlesIt) {
  class Handles final : public Policy {
   public:
    explicit Handles(bool handles) : handles_(handles) {}
    std::string_view Name() const override { return "handles"; }
    Recommendation Recommend(const PolicyInput&, PersistentState&) const override {
      return {1, true, "down", "down", {}};
    }
    std::vector<std::string> Signals() const override { return {"queue_len"}; }
    bool HandlesPartial(std::string_view) const override { return handles_; }

   private:
    bool handles_;
  };
  for (const bool handles : {false, true}) {
    SCOPED_TRACE(handles);
    sim::SimClock clock(AtSeconds(1000));
    FakeMetricSource source;
    FakeActuator actuator;
    actuator.Set("ns/w", 3, 3);
    source.Set("queue_len", {1, std::numeric_limits<double>::quiet_NaN()});
    Controller ctl(clock, nullptr);
    ASSERT_TRUE(
        ctl.Add(Bind("w", std::make_unique<Handles>(handles), &actuator, &source, {"queue_len"}))
            .ok());
    const Decision d = CollectThenTick(ctl).at(0);
    EXPECT_EQ(d.inputs.at(0).status, SignalStatus::kPartial);
    EXPECT_EQ(d.vetoed, !handles);
    EXPECT_EQ(d.constrained, handles ? 1 : 3) << d.stabilize_reason;
  }
}

// A negative recommendation is an overflow somewhere, never a size: held, not acted on.
TEST(Controller, ANegativeRecommendationHolds) {
  class Wraps final : public Policy {
   public:
    std::string_view Name() const override { return "wraps"; }
    Recommendation Recommend(const PolicyInput&, PersistentState&) const override {
      return {std::numeric_limits<int>::min(), true, "ratio", "wrapped", {}};
    }
    std::vector<std::string> Signals() const override { return {}; }
  };
  sim::SimClock clock(AtSeconds(1000));
  FakeActuator actuator;
  actuator.Set("ns/w", 4, 4);
  Controller ctl(clock, nullptr);
  ASSERT_TRUE(ctl.Add(Bind("w", std::make_unique<Wraps>(), &actuator, nullptr, {})).ok());
  const Decision d = CollectThenTick(ctl).at(0);
  EXPECT_EQ(d.constrained, 4);
  EXPECT_TRUE(actuator.applies.empty());
  EXPECT_NE(d.stabilize_reason.find("below zero"), std::string::npos) << d.stabilize_reason;
}

// aiscale_scale_down_vetoes_total counts the policy's own holds on missing data too, not only
// the Controller's veto; a hold with every signal present is not a veto.
TEST(Controller, VetoCounterCountsThePolicysOwnHoldsOnMissingData) {
  class Holds final : public Policy {
   public:
    std::string_view Name() const override { return "holds"; }
    Recommendation Recommend(const PolicyInput&, PersistentState&) const override {
      return {0, false, "hold", "holding", {}};
    }
    std::vector<std::string> Signals() const override { return {"queue_len"}; }
  };
  struct Case {
    const char* name;
    std::vector<double> values;
    double vetoes;
  };
  const std::vector<Case> cases = {
      {"missing", {}, 1},
      {"partial", {1, std::numeric_limits<double>::quiet_NaN()}, 1},
      {"complete", {1, 2}, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    sim::SimClock clock(AtSeconds(1000));
    FakeMetricSource source;
    FakeActuator actuator;
    actuator.Set("ns/w", 3, 3);
    if (!c.values.empty()) source.Set("queue_len", c.values);
    Telemetry t;
    ControllerOptions o;
    o.telemetry = &t;
    Controller ctl(clock, nullptr, o);
    ASSERT_TRUE(
        ctl.Add(Bind("w", std::make_unique<Holds>(), &actuator, &source, {"queue_len"})).ok());
    CollectThenTick(ctl);
    EXPECT_EQ(t.Value("aiscale_scale_down_vetoes_total", {{"workload", "ns/w"}}), c.vetoes);
  }
}

TEST(Controller, GoodLowSignalDoesScaleDown) {
  // The control for the test above: the same setup with valid data goes down.
  sim::SimClock clock(AtSeconds(1000));
  FakeMetricSource source;
  FakeActuator actuator;
  actuator.Set("ns/w", 5, 5);
  source.Set("queue_len", {4, 6});
  Controller ctl(clock, nullptr);
  ASSERT_TRUE(ctl.Add(Ratio("w", &actuator, &source)).ok());
  const Decision d = CollectThenTick(ctl).at(0);
  EXPECT_EQ(d.constrained, 1);
  EXPECT_EQ(d.action, Action::kScaled);
  EXPECT_EQ(d.inputs.at(0).status, SignalStatus::kOk);
  EXPECT_DOUBLE_EQ(d.inputs.at(0).sum, 10);
}

TEST(Controller, ACompletedWorkloadIsNeitherDecidedNorAppliedAndSaysSo) {
  // The engine reports the job finished (its agents exited 0): whatever the policy would want
  // (here 1, from the signals), the tick records rule "completed" at the current size, applies
  // nothing, and the live view says the workload's state; the next workload still decides.
  sim::SimClock clock(AtSeconds(1000));
  FakeMetricSource source;
  FakeActuator actuator;
  actuator.Set("ns/job", 3, 0);
  actuator.state["ns/job"].completed = true;
  actuator.state["ns/job"].detail = "replica 0 exited 0: the job finished";
  actuator.Set("ns/svc", 5, 5);
  source.Set("queue_len", {4, 6});
  LiveBoard board;
  ControllerOptions opt;
  opt.board = &board;
  Controller ctl(clock, nullptr, opt);
  ASSERT_TRUE(ctl.Add(Ratio("job", &actuator, &source)).ok());
  ASSERT_TRUE(ctl.Add(Ratio("svc", &actuator, &source)).ok());
  const std::vector<Decision> ds = CollectThenTick(ctl);
  const Decision& d = ds.at(0);
  EXPECT_EQ(d.recommendation.rule, kRuleCompleted);
  EXPECT_TRUE(d.recommendation.valid);
  EXPECT_EQ(d.constrained, 3);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_NE(d.recommendation.reason.find("replica 0 exited 0: the job finished"), std::string::npos)
      << d.recommendation.reason;
  EXPECT_TRUE(ctl.completed(0));
  EXPECT_FALSE(ctl.completed(1));
  EXPECT_EQ(ds.at(1).constrained, 1);  // the other workload decided and applied
  ASSERT_EQ(actuator.applies.size(), 1u);
  EXPECT_EQ(actuator.applies[0].first, "ns/svc");
  EXPECT_EQ(board.Workload("ns/job")->state, "completed");
  EXPECT_EQ(board.Workload("ns/svc")->state, "running");
}

TEST(Controller, WhileApplyingIsOffItDecidesButDoesNotApply) {
  // Leader election flips this at run time: a follower decides and records, never applies.
  struct Case {
    const char* name;
    int current;
    std::string want_detail;
  };
  const std::vector<Case> cases = {
      {"would scale", 2, "not leader (leader: b): would scale 2 -> 3"},
      {"nothing to do", 3, "not leader (leader: b)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    sim::SimClock clock(AtSeconds(1000));
    FakeActuator actuator;
    actuator.Set("ns/w", c.current, c.current);
    Controller ctl(clock, nullptr);
    ASSERT_TRUE(ctl.Add(Bind("w", Static(3), &actuator, nullptr, {})).ok());
    ctl.SetMayApply(false, "not leader (leader: b)");
    const Decision d = ctl.Tick().at(0);
    EXPECT_EQ(d.action, Action::kNone);
    EXPECT_EQ(d.constrained, 3);
    EXPECT_EQ(d.action_detail, c.want_detail);
    EXPECT_TRUE(actuator.applies.empty());
    ctl.SetMayApply(true);  // became leader
    EXPECT_EQ(ctl.Tick().at(0).action, c.current == 3 ? Action::kNone : Action::kScaled);
    EXPECT_EQ(actuator.applies.size(), c.current == 3 ? 0u : 1u);
  }
}

TEST(Controller, StalenessBoundaryToTheSecond) {
  // A value measured at t0 is data up to t0 + 45 s and stale from then on.
  sim::SimClock clock(AtSeconds(1000));
  FakeMetricSource source;
  FakeActuator actuator;
  actuator.Set("ns/w", 5, 5);
  source.Set("queue_len", {35});  // wants 4
  source.stamp = clock.Now();
  Controller ctl(clock, nullptr);
  ASSERT_TRUE(ctl.Add(Ratio("w", &actuator, &source)).ok());
  struct Step {
    double advance_s;
    SignalStatus status;
    int expect;
  };
  const std::vector<Step> steps = {
      {0, SignalStatus::kOk, 4}, {45, SignalStatus::kOk, 4}, {1, SignalStatus::kStale, 4}};
  for (const auto& s : steps) {
    clock.Advance(Seconds(s.advance_s));
    SCOPED_TRACE("t=" + std::to_string(SinceEpochSeconds(clock.Now())));
    actuator.Set("ns/w", 5, 5);
    const Decision d = CollectThenTick(ctl).at(0);
    EXPECT_EQ(d.inputs.at(0).status, s.status);
    EXPECT_EQ(d.constrained, s.status == SignalStatus::kOk ? s.expect : 5);
  }
}

TEST(Controller, ObserveAndApplyFailuresAreRecordedAndContained) {
  struct Case {
    const char* name;
    bool fail_observe;
    bool fail_apply;
    const char* detail;
  };
  const std::vector<Case> cases = {
      {"observe fails", true, false, "unable to observe scale: unable to observe ns/bad"},
      {"apply fails", false, true, "unable to apply scale to ns/bad: injected"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    sim::SimClock clock(AtSeconds(0));
    FakeMetricSource source;
    FakeActuator broken, good;
    broken.fail_observe = c.fail_observe;
    broken.fail_apply = c.fail_apply;
    broken.Set("ns/bad", 2, 2);
    good.Set("ns/good", 2, 2);
    store::MemoryStore store;
    Controller ctl(clock, &store);
    auto bad = Bind("bad", Static(4), &broken, &source, {});
    bad.stabilizer = std::make_unique<StepStabilizer>(10);
    ASSERT_TRUE(ctl.Add(std::move(bad)).ok());
    ASSERT_TRUE(ctl.Add(Bind("good", Static(4), &good, &source, {})).ok());
    const auto ds = CollectThenTick(ctl);
    ASSERT_EQ(ds.size(), 2u);
    EXPECT_EQ(ds[0].action, Action::kFailed);
    EXPECT_NE(ds[0].action_detail.find(c.detail), std::string::npos) << ds[0].action_detail;
    EXPECT_EQ(ds[1].action, Action::kScaled);
    EXPECT_EQ(good.state["ns/good"].current, 4);
    // The failure is in the store too, and no scale was recorded for the stabilizer.
    auto rec = store.Recent("ns/bad", 10);
    ASSERT_TRUE(rec.ok());
    ASSERT_EQ(rec->size(), 1u);
    EXPECT_EQ((*rec)[0].action, Action::kFailed);
    auto st = store.LoadState("ns/bad/stabilizer");
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->FindVec("to"), nullptr);
  }
}

// A Store whose writes fail, to see what the Controller does with that.
class FailingStore final : public Store {
 public:
  Status Append(const Decision&) override { return Status::Error("disk full"); }
  Result<std::vector<Decision>> Recent(const std::string&, size_t) override {
    return std::vector<Decision>{};
  }
  Result<PersistentState> LoadState(const std::string&) override { return PersistentState{}; }
  Status SaveState(const std::string&, const PersistentState&) override {
    return Status::Error("disk full");
  }
  int batches = 0;
  Status WriteBatch(const std::vector<StoreWrite>& writes) override {
    ++batches;
    last_batch = writes.size();
    return failing ? Status::Error("disk full") : Status::Ok();
  }
  size_t last_batch = 0;
  bool failing = true;
};

// Issue 27 §6: a full disk showed only in the API's last decision. It is logged once when
// writing starts failing and once when it resumes (with how many ticks were lost), and counted
// in /metrics every tick it fails.
TEST(Controller, AStoreThatFailsIsLoggedOnceCountedAndItsRecoverySaid) {
  sim::SimClock clock(AtSeconds(0));
  FakeActuator actuator;
  FailingStore store;
  store.failing = false;
  Telemetry t;
  std::vector<std::string> log;
  ControllerOptions o;
  o.telemetry = &t;
  o.log = [&log](const std::string& line) { log.push_back(line); };
  Controller ctl(clock, &store, o);
  actuator.Set("ns/w", 3, 3);
  ASSERT_TRUE(ctl.Add(Bind("w", Static(3), &actuator, nullptr, {})).ok());
  const std::vector<bool> fails = {false, true, true, true, false, false};
  for (bool f : fails) {
    store.failing = f;
    CollectThenTick(ctl);
    clock.AdvanceTo(clock.Now() + Seconds(15));
  }
  ASSERT_EQ(log.size(), 2u);
  EXPECT_NE(log[0].find("unable to write the store: disk full"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find("store writing resumed after 3 failed tick(s)"), std::string::npos)
      << log[1];
  EXPECT_EQ(t.Value("aiscale_store_write_errors_total", {}), 3);
  EXPECT_EQ(t.Value("aiscale_store_writable", {}), 1);
}

TEST(Controller, ATickIsOneStoreBatchAndAFailedOneIsRecordedInEveryDecision) {
  sim::SimClock clock(AtSeconds(0));
  FakeMetricSource source;
  FakeActuator actuator;
  FailingStore store;
  Controller ctl(clock, &store);
  for (const char* w : {"a", "b", "c"}) {
    actuator.Set(std::string("ns/") + w, 2, 2);
    ASSERT_TRUE(ctl.Add(Bind(w, Static(3), &actuator, &source, {})).ok());
  }
  const auto ds = CollectThenTick(ctl);
  EXPECT_EQ(store.batches, 1);
  EXPECT_EQ(store.last_batch, 3u);
  for (const auto& d : ds) {
    SCOPED_TRACE(d.workload);
    // The scale still happened: a store failure loses the record, not the action.
    EXPECT_EQ(d.action, Action::kScaled);
    EXPECT_NE(d.action_detail.find("unable to persist decision: disk full"), std::string::npos)
        << d.action_detail;
  }
  EXPECT_EQ(actuator.state["ns/b"].current, 3);
  // TickOne writes its workload alone.
  ctl.Collect();
  ctl.TickOne(1);
  EXPECT_EQ(store.batches, 2);
  EXPECT_EQ(store.last_batch, 1u);
}

TEST(Controller, StabilizerThenConstraintsInOrder) {
  struct Case {
    const char* name;
    int current;
    double load;  // queue_len sum; desired = ceil(load / 10)
    std::optional<int> max_available;
    int stabilized;
    int constrained;
    const char* constrain_reason;
  };
  // Constraints: 4..12 in groups of 4; stabilizer: at most 2 per tick. Done the other way
  // round (constrain then stabilize) the first case would give 6, not 8.
  const std::vector<Case> cases = {
      {"step limit then round up", 4, 170, std::nullopt, 6, 8, "rounded 6 up to a multiple of 4"},
      {"step limit then max", 12, 300, std::nullopt, 14, 12, "capped at max_replicas 12"},
      {"within step, rounded", 8, 95, std::nullopt, 10, 12, "rounded 10 up"},
      {"cluster capacity", 8, 100, 9, 10, 8, "cluster can host 9, capped at 8"},
      {"step down then rounded", 4, 1, std::nullopt, 2, 4, "rounded 2 up to a multiple of 4"},
      {"zero raised to min", 2, 0, std::nullopt, 0, 4, "raised to min_replicas 4"},
      {"no constraint binds", 8, 80, std::nullopt, 8, 8, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    sim::SimClock clock(AtSeconds(60));
    FakeMetricSource source;
    FakeActuator actuator;
    actuator.Set("ns/w", c.current, c.current);
    actuator.state["ns/w"].max_available = c.max_available;
    source.Set("queue_len", {c.load});
    store::MemoryStore store;
    Controller ctl(clock, &store);
    auto b = Ratio("w", &actuator, &source);
    b.stabilizer = std::make_unique<StepStabilizer>(2);
    b.constraints =
        std::make_unique<decide::Constraints>(decide::ConstraintsConfig{4, 12, 4, false});
    ASSERT_TRUE(ctl.Add(std::move(b)).ok());
    const Decision d = CollectThenTick(ctl).at(0);
    EXPECT_EQ(d.recommendation.desired, static_cast<int>(std::ceil(c.load / 10)));
    EXPECT_EQ(d.stabilized, c.stabilized);
    EXPECT_EQ(d.constrained, c.constrained);
    EXPECT_NE(d.constrain_reason.find(c.constrain_reason), std::string::npos) << d.constrain_reason;
    if (c.constrain_reason[0] == '\0') {
      EXPECT_EQ(d.constrain_reason, "");
    }
    EXPECT_EQ(actuator.state["ns/w"].current, c.constrained);
    auto st = store.LoadState("ns/w/stabilizer");
    ASSERT_TRUE(st.ok());
    if (c.constrained != c.current) {
      EXPECT_EQ(st->Get("from", -1), c.current);
      EXPECT_EQ(st->Get("to", -1), c.constrained);
      EXPECT_EQ(st->Get("at_s", -1), 60);
    } else {
      EXPECT_EQ(st->FindVec("to"), nullptr);
    }
  }
}

TEST(Controller, AddRejectsBadBindings) {
  sim::SimClock clock;
  FakeMetricSource source;
  FakeActuator actuator;
  struct Case {
    const char* name;
    std::function<WorkloadBinding()> make;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"duplicate name", [&] { return Bind("taken", Static(1), &actuator, &source, {}); },
       "unable to add workload ns/taken: name already in use"},
      {"unbound signal",
       [&] {
         return Bind("w", std::make_unique<RatioPolicy>("queue_len", 10), &actuator, &source,
                     {"gpu_util"});
       },
       "policy ratio reads queue_len but no source is bound for it"},
      {"signal without source",
       [&] {
         return Bind("w", std::make_unique<RatioPolicy>("queue_len", 10), &actuator, nullptr,
                     {"queue_len"});
       },
       "signal queue_len has no source"},
      {"no policy", [&] { return Bind("w", nullptr, &actuator, &source, {}); }, "no policy"},
      {"no actuator", [&] { return Bind("w", Static(1), nullptr, &source, {}); }, "no actuator"},
  };
  Controller ctl(clock, nullptr);
  ASSERT_TRUE(ctl.Add(Bind("taken", Static(1), &actuator, &source, {})).ok());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Status st = ctl.Add(c.make());
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.error), std::string::npos) << st.message();
  }
  EXPECT_EQ(ctl.size(), 1u);
  // Same name in another namespace is another workload.
  auto other = Bind("taken", Static(1), &actuator, &source, {});
  other.ref.namespace_ = "other";
  EXPECT_TRUE(ctl.Add(std::move(other)).ok());
}

// Restart: a second Controller over the same store continues the first one's state.
template <typename T>
class ControllerRestart : public ::testing::Test {};

struct UseMemory {
  static constexpr bool kSqlite = false;
};
struct UseSqlite {
  static constexpr bool kSqlite = true;
};
using StoreKinds = ::testing::Types<UseMemory, UseSqlite>;
TYPED_TEST_SUITE(ControllerRestart, StoreKinds);

TYPED_TEST(ControllerRestart, StateSurvivesRestart) {
  const std::string path = aiscale::testing::FreshTempDir("ctl") + "/store.db";
  std::unique_ptr<Store> memory = std::make_unique<store::MemoryStore>();
  auto open = [&]() -> std::unique_ptr<Store> {
    if (!TypeParam::kSqlite) return nullptr;  // memory lives across "restarts" below
    auto s = store::SqliteStore::Open(path);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::unique_ptr<Store>(std::move(s).value()) : nullptr;
  };
  sim::SimClock clock(AtSeconds(0));
  FakeMetricSource source;
  FakeActuator actuator;
  actuator.Set("ns/w", 2, 2);
  source.Set("queue_len", {25});  // wants 3
  auto make = [&] {
    auto b = Ratio("w", &actuator, &source);
    b.stabilizer = std::make_unique<StepStabilizer>(5);
    return b;
  };
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    std::unique_ptr<Store> sqlite = open();
    Store* store = TypeParam::kSqlite ? sqlite.get() : memory.get();
    ASSERT_NE(store, nullptr);
    Controller ctl(clock, store);
    ASSERT_TRUE(ctl.Add(make()).ok());
    for (int i = 0; i < 3; ++i) {
      clock.Advance(Seconds(15));
      CollectThenTick(ctl);
    }
    auto ps = store->LoadState("ns/w/policy");
    auto ss = store->LoadState("ns/w/stabilizer");
    ASSERT_TRUE(ps.ok() && ss.ok());
    EXPECT_EQ(ps->Get("ticks", 0), 3 * (run + 1));
    EXPECT_EQ(ss->Get("calls", 0), 3 * (run + 1));
    // The one scale (2 -> 3) happened in the first run, at t = 15 s.
    EXPECT_EQ(ss->Get("to", -1), 3);
    EXPECT_EQ(ss->Get("at_s", -1), 15);
    auto rec = store->Recent("ns/w", 100);
    ASSERT_TRUE(rec.ok());
    EXPECT_EQ(rec->size(), static_cast<size_t>(3 * (run + 1)));
  }
}

}  // namespace
}  // namespace aiscale::control
