// Workloads changed and removed at run time (AIScalers from a watch): Replace keeps what it may
// (learned state, signal history and fetches) and Remove leaves the engine alone; the Collector
// drops a removed workload's fetch that was still running, and reuses its slots.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <functional>
#include <memory>

#include "control/controller.h"
#include "decide/policies/static_policy.h"
#include "fakes/fake_actuator.h"
#include "fakes/fake_metric_source.h"
#include "sim/event_queue.h"
#include "store/memory_store.h"

namespace aiscale::control {
namespace {

using aiscale::testing::FakeActuator;
using aiscale::testing::FakeMetricSource;

// desired = ceil(sum / 10); counts its ticks in its state, so a kept state is visible.
class CountingPolicy final : public Policy {
 public:
  explicit CountingPolicy(std::string name = "counting") : name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }
  Recommendation Recommend(const PolicyInput& in, PersistentState& state) const override {
    state.Set("ticks", state.Get("ticks", 0) + 1);
    const double sum = in.signals.Get("queue_len").sum;
    return {static_cast<int>(std::ceil(sum / 10)), true, "ratio", "", {}};
  }
  std::vector<std::string> Signals() const override { return {"queue_len"}; }

 private:
  std::string name_;
};

WorkloadBinding Bind(const std::string& name, Actuator* a, MetricSource* src,
                     const std::string& state_key = "", const std::string& query = "",
                     const std::string& policy = "counting") {
  WorkloadBinding b;
  b.ref = {"Deployment", "ns", name};
  b.policy = std::make_shared<CountingPolicy>(policy);
  b.actuator = a;
  b.signals.push_back({"queue_len", query, src});
  b.state_key = state_key;
  return b;
}

// Runs tasks only when told, so a fetch can be "in flight" across a Remove.
class ManualExecutor final : public Executor {
 public:
  void Run(std::function<void()> task) override { tasks.push_back(std::move(task)); }
  void RunAll() {
    while (!tasks.empty()) {
      auto t = std::move(tasks.front());
      tasks.pop_front();
      t();
    }
  }
  std::deque<std::function<void()>> tasks;
};

class ControllerChangesTest : public ::testing::Test {
 protected:
  std::vector<Decision> Tick() {
    ctl_.Collect();
    return ctl_.Tick();
  }
  double Ticks(const std::string& state_key) {
    return store_.LoadState(state_key + "/policy").value().Get("ticks", 0);
  }

  sim::SimClock clock_{AtSeconds(1000)};
  FakeMetricSource source_;
  FakeActuator actuator_;
  store::MemoryStore store_;
  Controller ctl_{clock_, &store_, ControllerOptions{}};
};

TEST_F(ControllerChangesTest, RemoveStopsManagingAndLeavesTheEngine) {
  source_.Set("queue_len", {30});
  actuator_.Set("ns/a", 1, 1);
  actuator_.Set("ns/b", 1, 1);
  ASSERT_TRUE(ctl_.Add(Bind("a", &actuator_, &source_)).ok());
  ASSERT_TRUE(ctl_.Add(Bind("b", &actuator_, &source_)).ok());
  ASSERT_EQ(Tick().size(), 2u);
  ASSERT_EQ(actuator_.state["ns/a"].current, 3);

  ASSERT_TRUE(ctl_.Remove("ns/a").ok());
  EXPECT_EQ(Ticks("ns/a"), 1) << "its state is written on removal";
  source_.Set("queue_len", {70});
  clock_.Advance(Seconds(15));  // the next fetch is due
  const std::vector<Decision> d = Tick();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].workload, "ns/b");
  EXPECT_EQ(actuator_.state["ns/a"].current, 3) << "a removed workload's engine is not touched";
  EXPECT_EQ(actuator_.state["ns/b"].current, 7);
  EXPECT_TRUE(ctl_.Remove("ns/a").IsNotFound());
  EXPECT_TRUE(ctl_.Replace(Bind("a", &actuator_, &source_)).IsNotFound());
  // The name is free again.
  ASSERT_TRUE(ctl_.Add(Bind("a", &actuator_, &source_)).ok());
  EXPECT_EQ(Tick().size(), 2u);
}

TEST_F(ControllerChangesTest, ReplaceKeepsStateAndFetchesUnlessTheyChange) {
  source_.Set("queue_len", {30});
  actuator_.Set("ns/a", 1, 1);
  ASSERT_TRUE(ctl_.Add(Bind("a", &actuator_, &source_, "uid-1")).ok());
  Tick();
  Tick();
  ASSERT_EQ(Ticks("uid-1"), 2);
  const int fetches = source_.fetches;

  struct Case {
    const char* name;
    WorkloadBinding binding;
    double want_ticks;  // in the state after one more tick
    bool new_fetches;   // the signals changed: fetched afresh
  };
  std::vector<Case> cases;
  cases.push_back(
      {"same uid and policy: state kept", Bind("a", &actuator_, &source_, "uid-1"), 3, false});
  cases.push_back({"new query: state kept, new fetches",
                   Bind("a", &actuator_, &source_, "uid-1", "sum(q)"), 5, true});
  cases.push_back({"another policy: fresh policy state",
                   Bind("a", &actuator_, &source_, "uid-1", "sum(q)", "other"), 1, false});
  cases.push_back({"another uid: fresh state",
                   Bind("a", &actuator_, &source_, "uid-2", "sum(q)", "other"), 1, false});
  int last_fetches = fetches;
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string uid = c.binding.state_key;
    ASSERT_TRUE(ctl_.Replace(std::move(c.binding)).ok());
    ASSERT_EQ(ctl_.size(), 1u);
    // A fresh collection is due at once; a kept one only at its interval (15 s).
    Tick();
    EXPECT_EQ(source_.fetches > last_fetches, c.new_fetches);
    last_fetches = source_.fetches;
    EXPECT_EQ(ctl_.signals(0).Get("queue_len").ok(), true) << "history or a fresh fetch";
    clock_.AdvanceTo(clock_.Now() + Seconds(15));
    Tick();
    last_fetches = source_.fetches;
    EXPECT_EQ(Ticks(uid), c.want_ticks + 1);
  }
}

TEST_F(ControllerChangesTest, ReplaceIsCheckedAsAddIs) {
  ASSERT_TRUE(ctl_.Add(Bind("a", &actuator_, &source_)).ok());
  WorkloadBinding no_source = Bind("a", &actuator_, &source_);
  no_source.signals.clear();
  EXPECT_TRUE(ctl_.Replace(std::move(no_source)).IsInvalid());
  WorkloadBinding no_actuator = Bind("a", nullptr, &source_);
  EXPECT_TRUE(ctl_.Replace(std::move(no_actuator)).IsInvalid());
  source_.Set("queue_len", {20});
  actuator_.Set("ns/a", 1, 1);
  EXPECT_EQ(Tick().at(0).constrained, 2) << "the old binding still works";
}

TEST(CollectorRemove, DropsAFetchInFlightAndReusesItsSlots) {
  ManualExecutor exec;
  Collector collector(exec, nullptr);
  FakeMetricSource old_source, new_source;
  old_source.Set("queue_len", {1});
  new_source.Set("queue_len", {2});
  const WorkloadRef a{"Deployment", "ns", "a"}, b{"Deployment", "ns", "b"};
  const size_t id_a = collector.Add(a, {{"queue_len", "", &old_source, Seconds(15), Seconds(5)}});
  const TimePoint now = AtSeconds(100);
  collector.RunDue(now);
  ASSERT_EQ(exec.tasks.size(), 1u);
  collector.Remove(id_a);
  // The new workload takes the freed id and slot while a's fetch is still running.
  const size_t id_b = collector.Add(b, {{"queue_len", "", &new_source, Seconds(15), Seconds(5)}});
  EXPECT_EQ(id_b, id_a);
  exec.RunAll();  // a's fetch ends now: its result must not land in b's slot
  std::vector<Reading> r = collector.Read(id_b, now);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0]->ok()) << "b has not been fetched yet";
  collector.RunDue(now);
  exec.RunAll();
  r = collector.Read(id_b, now);
  ASSERT_TRUE(r[0]->ok());
  ASSERT_EQ((*r[0])->size(), 1u);
  EXPECT_EQ((**r[0])[0].value, 2);
  EXPECT_EQ(collector.InFlight(), 0u);
  EXPECT_TRUE(collector.Read(id_a + 100, now).empty());
}

}  // namespace
}  // namespace aiscale::control
