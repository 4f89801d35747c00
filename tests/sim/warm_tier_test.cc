// The warm tier (vLLM sleep mode) in the replica model: a replica put to sleep finishes what it
// serves, is billed apart while asleep, and wakes in the wake time instead of a cold start.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/event_queue.h"
#include "sim/inference/inference_service.h"
#include "sim/inference/serving_engine.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::inference {
namespace {

using traces::TraceRequest;

EngineOptions Plain(int concurrency, double service_s) {
  EngineOptions o;
  o.model.kind = ReplicaModel::Kind::kPlain;
  o.model.plain.concurrency = concurrency;
  o.model.plain.mean_s = service_s;
  o.model.plain.dist = PlainReplica::Dist::kConstant;
  o.queue_timeout_s = 1e6;
  return o;
}

int64_t Ns(double s) { return static_cast<int64_t>(s * 1e9); }

TEST(ServingEngine, SleepFinishesInFlightThenBillsTheAsleepShareApart) {
  ServingEngine e(Plain(1, 30.0));
  const int a = e.AddReplica(0);
  e.Arrive(TraceRequest{0, 1, 1});  // served 0-30 s
  e.AdvanceTo(Ns(10));
  e.SleepReplica(a);
  EXPECT_EQ(e.CountState(ReplicaState::kSleeping), 1);
  e.AdvanceTo(Ns(30));
  EXPECT_EQ(e.CountState(ReplicaState::kAsleep), 1);
  EXPECT_EQ(e.stats().completed(), 1u);
  e.AdvanceTo(Ns(100));
  EXPECT_NEAR(e.AsleepGpuSeconds(), 70, 1e-6);
  e.WakeReplica(a, Ns(105));
  e.AdvanceTo(Ns(104));
  EXPECT_EQ(e.CountState(ReplicaState::kStarting), 1);
  e.AdvanceTo(Ns(105));
  EXPECT_EQ(e.CountState(ReplicaState::kReady), 1);
  e.AdvanceTo(Ns(200));
  EXPECT_NEAR(e.AsleepGpuSeconds(), 70, 1e-6);
  EXPECT_NEAR(e.GpuSeconds(), 200, 1e-6);
}

TEST(ServingEngine, WakingASleepingReplicaServesOnAtOnce) {
  ServingEngine e(Plain(1, 30.0));
  const int a = e.AddReplica(0);
  e.Arrive(TraceRequest{0, 1, 1});
  e.AdvanceTo(Ns(10));
  e.SleepReplica(a);
  e.WakeReplica(a, Ns(1000));  // it never went to sleep: no wake time
  EXPECT_EQ(e.CountState(ReplicaState::kReady), 1);
  e.AdvanceTo(Ns(50));
  EXPECT_NEAR(e.AsleepGpuSeconds(), 0, 1e-9);
}

std::shared_ptr<InferenceSpec> WarmSpec(bool warm) {
  auto s = std::make_shared<InferenceSpec>();
  s->trace = traces::VectorSource({TraceRequest{Ns(1000), 1, 1}});
  s->engine = Plain(1, 0.5);
  s->provisioning_s = 60;
  s->model_load_s = 240;
  s->warm = warm;
  s->wake_s = 5;
  s->asleep_cost_fraction = 0.1;
  return s;
}

// A service of two ready replicas, 10 s into its run.
struct Running {
  explicit Running(bool warm) {
    env.name = "svc";
    env.initial_replicas = 2;
    svc = std::make_unique<InferenceService>(WarmSpec(warm), env);
    svc->Start(q);
    q.RunUntil(AtSeconds(10));
  }
  EventQueue q;
  WorkloadEnv env;
  std::unique_ptr<InferenceService> svc;
};

TEST(InferenceService, WarmTierWakesInTheWakeTimeNotAColdStart) {
  Running run(true);
  EventQueue& q = run.q;
  InferenceService& svc = *run.svc;
  ASSERT_TRUE(svc.ApplyTiers(1, 1).ok());
  EXPECT_EQ(svc.Observe()->current, 1);
  EXPECT_EQ(svc.Observe()->asleep, 1);
  q.RunUntil(AtSeconds(20));
  ASSERT_TRUE(svc.ApplyTiers(2, 0).ok());
  q.RunUntil(AtSeconds(24.9));
  EXPECT_EQ(svc.Observe()->ready, 1);
  q.RunUntil(AtSeconds(25));
  EXPECT_EQ(svc.Observe()->ready, 2) << "woken in wake_s (5 s), not a 300 s cold start";
  EXPECT_EQ(svc.Observe()->asleep, 0);
  const auto sum = svc.Summary();
  ASSERT_TRUE(sum.serving && sum.serving->warm);
  EXPECT_NEAR(sum.serving->warm->gpu_hours_asleep, 10 / 3600.0, 1e-9);
}

// The engine reports the tier as spec'd (asleep) and, of it, what is asleep now
// (asleep_ready), as the local engine does: a sleeper added now loads for its cold start (300 s)
// before it is asleep, and waking it then would take the rest of that, not the wake time.
TEST(InferenceService, WarmTierReportsSleepersStillLoadingApart) {
  Running run(true);
  ASSERT_TRUE(run.svc->ApplyTiers(2, 1).ok());
  EXPECT_EQ(run.svc->Observe()->asleep, 1);
  EXPECT_EQ(run.svc->Observe()->asleep_ready, 0) << "still loading";
  run.q.RunUntil(AtSeconds(309));
  EXPECT_EQ(run.svc->Observe()->asleep_ready, 0);
  run.q.RunUntil(AtSeconds(311));
  EXPECT_EQ(run.svc->Observe()->asleep, 1);
  EXPECT_EQ(run.svc->Observe()->asleep_ready, 1) << "loaded, then put to sleep";
}

// A wake takes the sleeper that serves soonest: one asleep (the wake time) before one still
// loading (the rest of its cold start), whichever was added last.
TEST(InferenceService, WarmTierWakesALoadedSleeperBeforeALoadingOne) {
  Running run(true);
  ASSERT_TRUE(run.svc->ApplyTiers(1, 1).ok());  // one of the two ready ones to sleep
  run.q.RunUntil(AtSeconds(20));
  ASSERT_TRUE(run.svc->ApplyTiers(1, 2).ok());  // and one more, loading until 320 s
  run.q.RunUntil(AtSeconds(30));
  ASSERT_EQ(run.svc->Observe()->asleep_ready, 1);
  ASSERT_TRUE(run.svc->ApplyTiers(2, 1).ok());
  run.q.RunUntil(AtSeconds(35));
  EXPECT_EQ(run.svc->Observe()->ready, 2) << "the asleep one woke in wake_s (5 s)";
  EXPECT_EQ(run.svc->Observe()->asleep, 1);
  EXPECT_EQ(run.svc->Observe()->asleep_ready, 0) << "the loading one stays in the tier";
}

TEST(InferenceService, NoWarmTierRefusesAsleepReplicasWithAReason) {
  Running run(false);
  InferenceService& svc = *run.svc;
  const Status st = svc.ApplyTiers(1, 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalid);
  EXPECT_NE(st.message().find("no warm tier"), std::string::npos) << st.message();
  EXPECT_EQ(svc.Observe()->current, 2);
  EXPECT_TRUE(svc.ApplyTiers(1, 0).ok());
  EXPECT_EQ(svc.Observe()->current, 1);
}

}  // namespace
}  // namespace aiscale::sim::inference
