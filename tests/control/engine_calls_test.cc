// Engines off the tick thread (issue 27 §2): with ControllerOptions::engine_calls set, as the
// daemon sets it, one engine that does not answer costs the other workloads nothing but the
// observe deadline, once; the hung workload's Decisions say why, no second call piles up
// behind the first, and a call that never started is never made late.
#include "control/engine_calls.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "control/controller.h"
#include "decide/policies/static_policy.h"
#include "sim/event_queue.h"

namespace aiscale::control {
namespace {

// An engine whose Observe or Apply for one workload can be held until released (an API server
// or slurmctld that stopped answering for it); every other call answers at once. Thread-safe:
// EngineCalls calls it from its own threads.
class GateActuator final : public Actuator {
 public:
  explicit GateActuator(std::string name) : name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override {
    std::unique_lock<std::mutex> lock(mu_);
    Gate(lock, ref.Key(), false);
    ++observes_[ref.Key()];
    ScaleState s;
    s.current = s.ready = SizeLocked(ref.Key());
    return s;
  }
  Status Apply(const WorkloadRef& ref, int desired) override {
    std::unique_lock<std::mutex> lock(mu_);
    Gate(lock, ref.Key(), true);
    applies_[ref.Key()].push_back(desired);
    size_[ref.Key()] = desired;
    return Status::Ok();
  }
  void Hold(const std::string& key, bool apply) {
    std::lock_guard<std::mutex> lock(mu_);
    held_key_ = key;
    held_apply_ = apply;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    held_key_.clear();
    cv_.notify_all();
  }
  // Blocks until no call is held in the gate any more.
  void AwaitNoneHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return in_gate_ == 0; });
  }
  int Observes(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return observes_[key];
  }
  std::vector<int> Applies(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return applies_[key];
  }

 private:
  void Gate(std::unique_lock<std::mutex>& lock, const std::string& key, bool apply) {
    if (key != held_key_ || apply != held_apply_) return;
    ++in_gate_;
    cv_.wait(lock, [&] { return held_key_.empty(); });
    --in_gate_;
    cv_.notify_all();
  }
  int SizeLocked(const std::string& key) {
    auto it = size_.find(key);
    return it == size_.end() ? 1 : it->second;
  }
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string held_key_;
  bool held_apply_ = false;
  int in_gate_ = 0;
  std::map<std::string, int> observes_, size_;
  std::map<std::string, std::vector<int>> applies_;
};

WorkloadBinding Bind(const std::string& name, Actuator& engine) {
  WorkloadBinding b;
  b.ref = {"Deployment", "ns", name};
  b.policy = std::make_shared<decide::StaticPolicy>(3);  // every workload wants 1 -> 3
  b.actuator = &engine;
  return b;
}

ControllerOptions Threaded(size_t threads) {
  ControllerOptions o;
  EngineCallOptions calls;
  calls.threads_per_engine = threads;
  // Generous, so that a busy machine's scheduling never reads as a hung engine; the test never
  // waits this long except for the call it holds.
  calls.observe_deadline = Seconds(1);
  calls.apply_deadline = Seconds(1);
  o.engine_calls = calls;
  return o;
}

const Decision& Of(const std::vector<Decision>& ds, const std::string& name) {
  for (const Decision& d : ds) {
    if (d.workload == "ns/" + name) return d;
  }
  ADD_FAILURE() << "no decision for " << name;
  return ds.front();
}

// Ticks until `name` is observed again after its held call ended (its late call is let go
// at the first tick that finds it done).
std::vector<Decision> TickUntilObserved(Controller& ctl, const std::string& name) {
  std::vector<Decision> ds;
  for (int i = 0; i < 100; ++i) {
    ds = ctl.Tick();
    if (Of(ds, name).recommendation.rule != "observe_failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ds;
}

TEST(EngineCalls, OneHungEngineDelaysNoOtherWorkload) {
  sim::SimClock clock(AtSeconds(1000));
  GateActuator kube("kubernetes"), slurm("slurm");
  Telemetry metrics;
  ControllerOptions o = Threaded(4);
  o.telemetry = &metrics;
  Controller ctl(clock, nullptr, o);
  ASSERT_TRUE(ctl.Add(Bind("a", kube)).ok());
  ASSERT_TRUE(ctl.Add(Bind("train", slurm)).ok());
  ASSERT_TRUE(ctl.Add(Bind("b", kube)).ok());
  slurm.Hold("ns/train", false);

  std::vector<Decision> ds = ctl.Tick();
  EXPECT_EQ(kube.Applies("ns/a"), std::vector<int>({3}));
  EXPECT_EQ(kube.Applies("ns/b"), std::vector<int>({3}));
  EXPECT_EQ(Of(ds, "a").action, Action::kScaled);
  const Decision& hung = Of(ds, "train");
  EXPECT_EQ(hung.action, Action::kFailed);
  EXPECT_EQ(hung.action_code, StatusCode::kDeadlineExceeded);
  EXPECT_NE(hung.action_detail.find("no answer from the engine (slurm) to Observe within 1 s"),
            std::string::npos)
      << hung.action_detail;

  // Next tick: the call is still out; the workload says so and no second call is made.
  ds = ctl.Tick();
  EXPECT_NE(Of(ds, "train").action_detail.find("has not yet answered the Observe call"),
            std::string::npos)
      << Of(ds, "train").action_detail;
  EXPECT_EQ(Of(ds, "a").current, 3);
  EXPECT_EQ(metrics.Value("aiscale_engine_calls_late", {}), 1);
  slurm.Release();
  slurm.AwaitNoneHeld();
  ds = TickUntilObserved(ctl, "train");
  EXPECT_EQ(Of(ds, "train").action, Action::kScaled);
  EXPECT_EQ(slurm.Applies("ns/train"), std::vector<int>({3}));
  EXPECT_EQ(slurm.Observes("ns/train"), 2);  // the held one, then the one that decided
  EXPECT_EQ(metrics.Value("aiscale_engine_calls_late", {}), 0);
}

TEST(EngineCalls, AnApplyPastItsDeadlineIsReportedAndNotRepeated) {
  sim::SimClock clock(AtSeconds(1000));
  GateActuator kube("kubernetes");
  Controller ctl(clock, nullptr, Threaded(4));
  ASSERT_TRUE(ctl.Add(Bind("a", kube)).ok());
  ASSERT_TRUE(ctl.Add(Bind("b", kube)).ok());
  kube.Hold("ns/a", true);

  std::vector<Decision> ds = ctl.Tick();
  EXPECT_EQ(Of(ds, "b").action, Action::kScaled);
  const Decision& late = Of(ds, "a");
  EXPECT_EQ(late.action, Action::kFailed);
  EXPECT_EQ(late.action_code, StatusCode::kDeadlineExceeded);
  EXPECT_NE(late.action_detail.find("to Apply within 1 s; the call goes on"), std::string::npos)
      << late.action_detail;
  ds = ctl.Tick();  // still held: not observed, so not applied again
  EXPECT_EQ(Of(ds, "a").recommendation.rule, "observe_failed");
  kube.Release();
  kube.AwaitNoneHeld();
  ds = TickUntilObserved(ctl, "a");
  // The late Apply landed: the engine is at 3 and nothing more is applied.
  EXPECT_EQ(Of(ds, "a").current, 3);
  EXPECT_EQ(Of(ds, "a").action, Action::kNone);
  EXPECT_EQ(kube.Applies("ns/a"), std::vector<int>({3}));
}

TEST(EngineCalls, ACallThatCouldNotStartIsNeverMadeLate) {
  sim::SimClock clock(AtSeconds(1000));
  GateActuator kube("kubernetes");
  Controller ctl(clock, nullptr, Threaded(1));  // one call at a time on this engine
  ASSERT_TRUE(ctl.Add(Bind("a", kube)).ok());
  ASSERT_TRUE(ctl.Add(Bind("b", kube)).ok());
  kube.Hold("ns/a", false);

  std::vector<Decision> ds = ctl.Tick();
  EXPECT_NE(Of(ds, "b").action_detail.find("Observe not started within 1 s"), std::string::npos)
      << Of(ds, "b").action_detail;
  kube.Release();
  kube.AwaitNoneHeld();
  // The thread is free now; b's queued call of the last tick is dropped, not made.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(kube.Observes("ns/b"), 0);
  ds = TickUntilObserved(ctl, "a");
  EXPECT_EQ(Of(ds, "b").action, Action::kScaled);
  EXPECT_EQ(kube.Observes("ns/b"), 1);
}

TEST(EngineCalls, RemovingAWorkloadWaitsForItsLateCall) {
  sim::SimClock clock(AtSeconds(1000));
  GateActuator kube("kubernetes");
  Controller ctl(clock, nullptr, Threaded(2));
  ASSERT_TRUE(ctl.Add(Bind("a", kube)).ok());
  kube.Hold("ns/a", false);
  (void)ctl.Tick();
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kube.Release();
  });
  ASSERT_TRUE(ctl.Remove("ns/a").ok());
  // Remove returned only once the call was answered: the engine may go now.
  EXPECT_EQ(kube.Observes("ns/a"), 1);
  release.join();
}

}  // namespace
}  // namespace aiscale::control
