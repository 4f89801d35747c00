// The inference service model: queueing laws, continuous batching, cold start, draining and
// routing, each checked against numbers derived by hand from the model's definition.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/event_queue.h"
#include "sim/inference/inference_service.h"
#include "sim/inference/request_stats.h"
#include "sim/inference/serving_engine.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::inference {
namespace {

using traces::TraceRequest;

EngineOptions Plain(int concurrency, double service_s,
                    PlainReplica::Dist d = PlainReplica::Dist::kConstant) {
  EngineOptions o;
  o.model.kind = ReplicaModel::Kind::kPlain;
  o.model.plain.concurrency = concurrency;
  o.model.plain.mean_s = service_s;
  o.model.plain.dist = d;
  o.queue_timeout_s = 1e6;
  return o;
}

EngineOptions Llm(int max_batch, int64_t kv, double prefill = 0.0001, double base = 0.01,
                  double per_seq = 0.001) {
  EngineOptions o;
  o.model.kind = ReplicaModel::Kind::kLlm;
  o.model.llm.max_batch = max_batch;
  o.model.llm.kv_capacity_tokens = kv;
  o.model.llm.prefill_s_per_token = prefill;
  o.model.llm.decode_base_s = base;
  o.model.llm.decode_per_seq_s = per_seq;
  o.queue_timeout_s = 1e6;
  return o;
}

TraceRequest Req(double t_s, uint32_t in, uint32_t out) {
  return TraceRequest{static_cast<int64_t>(t_s * 1e9), in, out};
}

std::vector<TraceRequest> Poisson(double rate, double duration_s, uint64_t seed, uint32_t in = 100,
                                  uint32_t out = 10) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  std::vector<TraceRequest> v;
  for (double t = gap(rng); t < duration_s; t += gap(rng)) v.push_back(Req(t, in, out));
  return v;
}

TEST(ServingEngine, LittlesLawOnAPlainServer) {
  struct Case {
    std::string name;
    int replicas, concurrency;
    double service_s, rate;
    PlainReplica::Dist dist;
  };
  const std::vector<Case> cases = {
      {"M/D/2 at 70%", 2, 1, 0.5, 2.8, PlainReplica::Dist::kConstant},
      {"M/M/3x2 at 80%", 3, 2, 1.0, 4.8, PlainReplica::Dist::kExponential},
      {"lognormal 4 replicas", 4, 1, 0.2, 14, PlainReplica::Dist::kLognormal},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ServingEngine e(Plain(c.concurrency, c.service_s, c.dist));
    for (int i = 0; i < c.replicas; ++i) e.AddReplica(0);
    const double duration = 4000;
    const auto reqs = Poisson(c.rate, duration, 11);
    // Time-average number in system, sampled every 10 ms.
    double area = 0;
    size_t next = 0;
    const int64_t step = 10'000'000;
    for (int64_t t = 0; t < static_cast<int64_t>(duration * 1e9); t += step) {
      while (next < reqs.size() && reqs[next].arrival_ns <= t) e.Arrive(reqs[next++]);
      e.AdvanceTo(t);
      int in_system = static_cast<int>(e.queue_len());
      for (const auto& r : e.Replicas()) in_system += r.in_flight;
      area += in_system * 0.01;
    }
    e.AdvanceTo(INT64_MAX);
    const double l = area / duration;
    const double lambda = static_cast<double>(reqs.size()) / duration;
    const double w = e.stats().latency().MeanSeconds();
    EXPECT_EQ(e.stats().completed(), reqs.size());
    EXPECT_NEAR(l, lambda * w, 0.03 * l);
    // Utilisation law: busy servers = lambda * S.
    EXPECT_GT(w, c.service_s * 0.9);
  }
}

TEST(ServingEngine, SingleLlmRequestTimesFollowTheStepModel) {
  // One request alone: its step with prefill takes base + per_seq + prefill*in; then out - 1
  // decode steps of base + per_seq each.
  ServingEngine e(Llm(8, 100000));
  e.AddReplica(0);
  e.Arrive(Req(1.0, 2000, 50));
  e.AdvanceTo(INT64_MAX);
  const double step = 0.01 + 0.001;
  const double ttft = step + 0.0001 * 2000;
  const double latency = ttft + 49 * step;
  EXPECT_NEAR(e.stats().ttft().QuantileSeconds(0.5), ttft, ttft * 0.01);
  EXPECT_NEAR(e.stats().latency().QuantileSeconds(0.5), latency, latency * 0.01);
}

double SaturatedTokensPerSecond(int max_batch, int64_t kv) {
  ServingEngine e(Llm(max_batch, kv, 0.00002, 0.02, 0.0005));
  e.AddReplica(0);
  const int n = 512;
  for (int i = 0; i < n; ++i) e.Arrive(Req(0, 200, 200));
  e.AdvanceTo(INT64_MAX);
  EXPECT_EQ(e.stats().completed(), static_cast<uint64_t>(n));
  const double makespan = e.stats().latency().QuantileSeconds(1.0);
  return n * 200.0 / makespan;
}

TEST(ServingEngine, ContinuousBatchingThroughputGrowsWithBatchUpToTheKvCap) {
  // Each request reserves 400 KV tokens; 12800 tokens hold 32 requests.
  const int64_t kv = 32 * 400;
  const std::vector<int> batches = {1, 2, 4, 8, 16, 32};
  double prev = 0;
  for (int b : batches) {
    SCOPED_TRACE("batch " + std::to_string(b));
    const double tps = SaturatedTokensPerSecond(b, kv);
    EXPECT_GT(tps, prev * 1.3);  // step time grows far slower than the batch
    prev = tps;
  }
  // Past the KV cap a larger max_batch changes nothing.
  EXPECT_NEAR(SaturatedTokensPerSecond(64, kv), prev, prev * 0.01);
  EXPECT_NEAR(SaturatedTokensPerSecond(256, kv), prev, prev * 0.01);
  EXPECT_GT(SaturatedTokensPerSecond(64, 2 * kv), prev * 1.2);
}

TEST(ServingEngine, LeastLoadedRouting) {
  ServingEngine e(Plain(4, 100.0));
  const int a = e.AddReplica(0);
  const int b = e.AddReplica(0);
  const int c = e.AddReplica(0);
  // Six long requests spread 2/2/2, never 4/1/1.
  for (int i = 0; i < 6; ++i) e.Arrive(Req(0.1 * i, 1, 1));
  for (const auto& v : e.Replicas()) EXPECT_EQ(v.in_flight, 2) << "replica " << v.id;
  // A newly ready replica takes the next ones until it has caught up.
  const int d = e.AddReplica(static_cast<int64_t>(1e9));
  e.Arrive(Req(2.0, 1, 1));
  e.Arrive(Req(2.1, 1, 1));
  std::vector<int> load(4, 0);
  for (const auto& v : e.Replicas()) load[static_cast<size_t>(v.id)] = v.in_flight;
  EXPECT_EQ(load[static_cast<size_t>(d)], 2);
  EXPECT_EQ(
      load[static_cast<size_t>(a)] + load[static_cast<size_t>(b)] + load[static_cast<size_t>(c)],
      6);
}

TEST(ServingEngine, KvCacheBoundsAdmission) {
  ServingEngine e(Llm(64, 1000));
  e.AddReplica(0);
  for (int i = 0; i < 5; ++i) e.Arrive(Req(0, 200, 100));  // 300 tokens each: 3 fit
  e.AdvanceTo(1);
  ASSERT_EQ(e.Replicas().size(), 1u);
  EXPECT_EQ(e.Replicas()[0].in_flight, 3);
  EXPECT_EQ(e.queue_len(), 2u);
  EXPECT_NEAR(e.Replicas()[0].kv_usage, 0.9, 1e-9);
  e.Arrive(Req(0.5, 2000, 10));  // larger than the whole cache: dropped at once
  EXPECT_EQ(e.stats().dropped(), 1u);
}

TEST(ServingEngine, QueueTimeoutDropsWaitingRequests) {
  EngineOptions o = Plain(1, 10.0);
  o.queue_timeout_s = 5;
  o.slo.ttft_s = 20;  // a plain server's first byte is its whole answer
  ServingEngine e(o);
  e.AddReplica(0);
  for (int i = 0; i < 3; ++i) e.Arrive(Req(0, 1, 1));
  e.AdvanceTo(static_cast<int64_t>(4.9e9));
  EXPECT_EQ(e.stats().timed_out(), 0u);
  e.AdvanceTo(static_cast<int64_t>(5.1e9));
  EXPECT_EQ(e.stats().timed_out(), 2u);
  e.AdvanceTo(INT64_MAX);
  EXPECT_EQ(e.stats().completed(), 1u);
  EXPECT_NEAR(e.stats().Attainment(), 1.0 / 3, 1e-9);
}

TEST(ServingEngine, RemovedReplicaDrainsAndIsBilledUntilDrained) {
  ServingEngine e(Plain(2, 30.0));
  const int a = e.AddReplica(0);
  const int b = e.AddReplica(0);
  e.Arrive(Req(0, 1, 1));  // -> a
  e.Arrive(Req(0, 1, 1));  // -> b
  e.AdvanceTo(static_cast<int64_t>(10e9));
  e.RemoveReplica(a);
  e.Arrive(Req(11, 1, 1));  // must go to b, not the draining a
  EXPECT_EQ(e.CountState(ReplicaState::kDraining), 1);
  int b_load = 0;
  for (const auto& v : e.Replicas()) {
    if (v.id == b) b_load = v.in_flight;
  }
  EXPECT_EQ(b_load, 2);
  e.AdvanceTo(static_cast<int64_t>(29.9e9));
  EXPECT_EQ(e.CountState(ReplicaState::kDraining), 1);
  e.AdvanceTo(static_cast<int64_t>(30e9));
  EXPECT_EQ(e.CountState(ReplicaState::kDraining), 0);
  // a billed 0-30 s, b 0-100 s (still live at 100 s).
  e.AdvanceTo(static_cast<int64_t>(100e9));
  EXPECT_NEAR(e.GpuSeconds(), 30 + 100, 1e-6);
  // A replica removed while still starting is released at once.
  const int c = e.AddReplica(static_cast<int64_t>(200e9));
  e.AdvanceTo(static_cast<int64_t>(110e9));
  e.RemoveReplica(c);
  e.AdvanceTo(static_cast<int64_t>(300e9));
  EXPECT_NEAR(e.GpuSeconds(), 30 + 300 + 10, 1e-6);
}

std::shared_ptr<InferenceSpec> ServiceSpec(std::vector<TraceRequest> reqs, double provisioning,
                                           double load) {
  auto s = std::make_shared<InferenceSpec>();
  s->trace = traces::VectorSource(std::move(reqs));
  s->engine = Plain(1, 0.5);
  s->provisioning_s = provisioning;
  s->model_load_s = load;
  return s;
}

TEST(InferenceService, ColdStartDelaysReadinessExactly) {
  struct Case {
    std::string name;
    double provisioning, load;
  };
  const std::vector<Case> cases = {
      {"small model", 5, 10}, {"70B model", 60, 240}, {"warm pool", 0, 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EventQueue q;
    WorkloadEnv env;
    env.name = "svc";
    env.initial_replicas = 1;
    InferenceService svc(ServiceSpec({Req(1000, 1, 1)}, c.provisioning, c.load), env);
    svc.Start(q);
    q.RunUntil(AtSeconds(10));
    ASSERT_TRUE(svc.Apply(3).ok());
    const double ready_at = 10 + c.provisioning + c.load;
    if (ready_at > 10) {
      q.RunUntil(AtSeconds(ready_at) - Duration(1));
      auto s = svc.Observe();
      EXPECT_EQ(s->current, 3);
      EXPECT_EQ(s->ready, 1);
    }
    q.RunUntil(AtSeconds(ready_at));
    EXPECT_EQ(svc.Observe()->ready, 3);
  }
}

// A warm two-replica service with no cold start and 5 s signal windows.
std::shared_ptr<InferenceSpec> TwoReplicaService(const std::vector<TraceRequest>& reqs) {
  auto spec = ServiceSpec(reqs, 0, 0);
  spec->engine.window_s = 5;
  return spec;
}
WorkloadEnv TwoReplicaEnv() {
  WorkloadEnv env;
  env.name = "svc";
  env.initial_replicas = 2;
  return env;
}

TEST(InferenceService, SignalsAndDoneAfterTheTraceDrains) {
  std::vector<TraceRequest> reqs;
  for (int i = 0; i < 100; ++i) reqs.push_back(Req(i * 0.5, 10, 1));  // 2/s for 50 s
  EventQueue q;
  InferenceService svc(TwoReplicaService(reqs), TwoReplicaEnv());
  svc.Start(q);
  q.RunUntil(AtSeconds(20));
  svc.Signal("gpu_util", AtSeconds(20));  // starts the utilisation interval
  q.RunUntil(AtSeconds(30));
  const auto rate = svc.Signal("request_rate", AtSeconds(30));
  ASSERT_EQ(rate.size(), 1u);
  EXPECT_NEAR(rate[0].value, 2, 0.01);
  EXPECT_EQ(rate[0].at, AtSeconds(30));
  EXPECT_EQ(svc.Signal("concurrency", AtSeconds(30)).size(), 2u);
  const auto util = svc.Signal("gpu_util", AtSeconds(30));
  ASSERT_EQ(util.size(), 2u);
  EXPECT_NEAR(util[0].value + util[1].value, 100 * 2 * 0.5, 1);  // lambda * S busy servers
  EXPECT_FALSE(svc.Done());
  q.RunUntil(AtSeconds(60));
  EXPECT_TRUE(svc.Done());
  const auto sum = svc.Summary();
  ASSERT_TRUE(sum.serving.has_value());
  EXPECT_EQ(sum.serving->requests, 100);
  EXPECT_EQ(sum.serving->completed, 100);
  EXPECT_DOUBLE_EQ(sum.serving->slo_attainment, 1.0);
}

TEST(InferenceService, RatesWaitForAFullWindow) {
  // A rate over a window that has not been open a whole window is no rate: a 0 read at
  // start-up would look like "no demand" and scale a warm service down.
  struct Case {
    double at_s;
    bool want;
  };
  const std::vector<Case> cases = {{0, false}, {4.9, false}, {5, true}, {12, true}};
  std::vector<TraceRequest> reqs;
  for (int i = 0; i < 100; ++i) reqs.push_back(Req(i * 0.5, 10, 1));
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at_s);
    EventQueue q;
    InferenceService svc(TwoReplicaService(reqs), TwoReplicaEnv());
    svc.Start(q);
    q.RunUntil(AtSeconds(c.at_s));
    for (const char* name : {"request_rate", "tokens_per_s"}) {
      EXPECT_EQ(svc.Signal(name, AtSeconds(c.at_s)).size(), c.want ? 1u : 0u) << name;
    }
    // Instantaneous signals are there from the start.
    EXPECT_EQ(svc.Signal("queue_len", AtSeconds(c.at_s)).size(), 1u);
  }
}

TEST(InferenceService, WarmStartIsWhatTheFirstIntervalNeeds) {
  // 1 s plain requests: 6/s in the first minute needs ~8 replicas within a 1.5 s SLO, 1/s
  // later needs far fewer; the warm start follows the first minute, static-peak the busiest.
  std::vector<TraceRequest> reqs;
  for (int i = 0; i < 360; ++i) reqs.push_back(Req(i / 6.0, 1, 1));
  for (int i = 0; i < 60; ++i) reqs.push_back(Req(60 + i, 1, 1));
  for (int i = 0; i < 1200; ++i) reqs.push_back(Req(120 + i / 20.0, 1, 1));
  WorkloadEnv env;
  env.name = "svc";
  auto spec = ServiceSpec(reqs, 0, 0);
  spec->engine.model = Plain(1, 1.0).model;
  spec->engine.slo = {1.5, 1.5, 0.99};
  InferenceService svc(spec, env);
  const std::optional<int> warm = svc.BaselineReplicas("warm-start");
  const std::optional<int> peak = svc.BaselineReplicas("static-peak");
  ASSERT_TRUE(warm && peak);
  EXPECT_GE(*warm, 6);
  EXPECT_LE(*warm, 10);
  EXPECT_GE(*peak, 20);
  EXPECT_FALSE(svc.BaselineReplicas("something-else"));
}

// A scenario shorter than its trace's window never serves what arrives after its end: the
// oracle and the static-peak size it gives are of the run's own requests, not of the trace's
// (a 7-day slice of a 20-day trace was judged against all 20 days' oracle).
TEST(InferenceService, TheOracleEndsWithTheRun) {
  std::vector<TraceRequest> reqs;
  for (int i = 0; i < 60; ++i) reqs.push_back(Req(i, 1, 1));                 // 1/s
  for (int i = 0; i < 1200; ++i) reqs.push_back(Req(120 + i / 20.0, 1, 1));  // then 20/s
  struct Case {
    double duration_s;
    int min_peak, max_peak;
  };
  for (const Case& c : {Case{0, 20, 40}, Case{100, 1, 3}, Case{119.9, 1, 3}, Case{300, 20, 40}}) {
    SCOPED_TRACE(c.duration_s);
    WorkloadEnv env;
    env.name = "svc";
    env.duration_s = c.duration_s;
    auto spec = ServiceSpec(reqs, 0, 0);
    spec->engine.model = Plain(1, 1.0).model;
    spec->engine.slo = {1.5, 1.5, 0.99};
    InferenceService svc(spec, env);
    const std::optional<int> peak = svc.BaselineReplicas("static-peak");
    ASSERT_TRUE(peak);
    EXPECT_GE(*peak, c.min_peak);
    EXPECT_LE(*peak, c.max_peak);
  }
}

// As vLLM observes them: a request's TTFT counts in the window of its first token, its
// end-to-end latency in the window of its last. A slow first token of a long answer must show
// within seconds (the policy acts on it), not only once the answer ends minutes later.
TEST(ServingEngine, TtftIsObservedAtTheFirstTokenAndLatencyAtTheLast) {
  ServingEngine e(Llm(8, 100000, /*prefill=*/0.001, /*base=*/0.1, /*per_seq=*/0));
  e.AddReplica(0);
  e.Arrive(Req(1.0, 2000, 600));  // first token at 1 + 0.1 + 2 = 3.1 s; last at ~63 s
  const double ttft = 0.1 + 0.001 * 2000;
  struct Case {
    double now_s;
    double ttft_p99, latency_p99;  // over the engine's window ending at now_s (0: nothing)
  };
  const std::vector<Case> cases = {
      {3.0, 0, 0},                  // before the first token
      {5.0, ttft, 0},               // first token seen; still decoding
      {40.0, 0, 0},                 // its first token has left the window; not done yet
      {70.0, 0, ttft + 599 * 0.1},  // done: the latency counts now, the TTFT does not again
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.now_s);
    e.AdvanceTo(static_cast<int64_t>(c.now_s * 1e9));
    const int64_t now = static_cast<int64_t>(c.now_s * 1e9);
    EXPECT_NEAR(e.stats().WindowQuantile(now, 0.99, /*ttft=*/true), c.ttft_p99, 1e-3);
    EXPECT_NEAR(e.stats().WindowQuantile(now, 0.99, /*ttft=*/false), c.latency_p99, 1e-3);
  }
}

TEST(RequestStats, QuantilesOverASpanCoverEveryCompletionOnce) {
  // Completions at 1..60 s with latency = their second; a 15 s window, kept for 30 s.
  RequestStats st(Slo{}, 15'000'000'000);
  st.SetRetention(30'000'000'000);
  for (int i = 1; i <= 60; ++i) {
    st.OnComplete(static_cast<int64_t>(i) * 1'000'000'000, static_cast<int64_t>(i) * 1'000'000'000,
                  0);
  }
  struct Case {
    double from_s, to_s, q, want;
  };
  const std::vector<Case> cases = {
      {30, 60, 0.99, 60},                     // (30, 60]: the whole retention
      {30, 60, 0.5, 45},                      // nearest rank of 30 values
      {45, 60, 0.99, 60},                     // = WindowQuantile at 60
      {59, 60, 0.5, 60},  {10, 20, 0.99, 0},  // older than the retention: gone
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.from_s) + ".." + std::to_string(c.to_s));
    EXPECT_DOUBLE_EQ(st.QuantileBetween(static_cast<int64_t>(c.from_s * 1e9),
                                        static_cast<int64_t>(c.to_s * 1e9), c.q, false),
                     c.want);
  }
  EXPECT_DOUBLE_EQ(st.WindowQuantile(60'000'000'000, 0.99, false), 60);
}

}  // namespace
}  // namespace aiscale::sim::inference
