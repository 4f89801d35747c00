// Inference simulator throughput and memory (issue 3 targets: >= 1,000,000 requests replayed
// per CPU-second; 10 M requests replayed in under 1 GiB resident).
//
// Workload: the real Azure LLM conversation trace (../shared/traces/azure_llm_2023, 19,366
// requests in 58 min), replayed with a rate multiplier (trace_transform.h) into an
// InferenceService of continuous-batching LLM replicas on the simulator's EventQueue, with a
// controller-like scrape of every serving signal each 15 s (the path a Controller tick takes).
// Requests/CPU-second = requests replayed / process CPU time of the replay (trace parsing
// included), median of 5 runs of ~2 M requests; then one run of ~10 M for peak RSS
// (getrusage ru_maxrss). Prints both; exits non-zero if a target is missed.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "core/signal.h"
#include "sim/event_queue.h"
#include "sim/inference/inference_service.h"
#include "sim/traces/azure_llm_trace.h"
#include "sim/traces/trace_transform.h"

namespace {

using namespace aiscale;
using namespace aiscale::sim;

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Outcome {
  uint64_t requests = 0;
  double cpu_s = 0;
  double attainment = 0;
};

Outcome Replay(double multiplier, int replicas) {
  const double t0 = CpuSeconds();
  traces::TransformOptions t;
  t.rate_multiplier = multiplier;
  t.seed = 5;
  auto spec = std::make_shared<inference::InferenceSpec>();
  spec->trace = traces::Transformed(
      traces::AzureLlmTrace(std::string(AISCALE_SHARED_DIR) +
                            "/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv"),
      t);
  auto& m = spec->engine.model;
  m.kind = inference::ReplicaModel::Kind::kLlm;
  m.llm.max_batch = 128;
  m.llm.kv_capacity_tokens = 500000;
  m.llm.prefill_s_per_token = 0.00004;
  m.llm.decode_base_s = 0.012;
  m.llm.decode_per_seq_s = 0.0002;
  spec->engine.slo = {2, 60, 0.99};
  EventQueue q;
  WorkloadEnv env;
  env.name = "bench";
  env.initial_replicas = replicas;
  inference::InferenceService svc(spec, env);
  svc.Start(q);
  const std::vector<std::string_view> names = {
      signals::kRequestRate, signals::kConcurrency, signals::kQueueLen,    signals::kKvCacheUsage,
      signals::kGpuUtil,     signals::kTokensPerS,  signals::kLatencyP99S, signals::kTtftP99S};
  std::function<void()> scrape = [&] {
    for (auto n : names) (void)svc.Signal(n, q.Now());
    (void)svc.Observe();
    if (!svc.Done()) q.After(Seconds(15), scrape);
  };
  q.After(Seconds(15), scrape);
  q.Run();
  Outcome o;
  o.requests = svc.engine().stats().arrived();
  o.attainment = svc.engine().stats().Attainment();
  o.cpu_s = CpuSeconds() - t0;
  return o;
}

}  // namespace

int main() {
  // ~2 M requests: x100 the trace (about 560 requests/s), served by 170 replicas.
  std::vector<double> rates;
  for (int i = 0; i < 5; ++i) {
    const Outcome o = Replay(100, 170);
    rates.push_back(static_cast<double>(o.requests) / o.cpu_s);
    std::printf("run %d: %llu requests in %.3f CPU-s = %.0f requests/CPU-s (SLO attainment %.4f)\n",
                i + 1, static_cast<unsigned long long>(o.requests), o.cpu_s, rates.back(),
                o.attainment);
  }
  std::sort(rates.begin(), rates.end());
  const double median = rates[rates.size() / 2];
  const Outcome big = Replay(520, 880);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  std::printf("10M run: %llu requests in %.2f CPU-s = %.0f requests/CPU-s (SLO attainment %.4f)\n",
              static_cast<unsigned long long>(big.requests), big.cpu_s,
              static_cast<double>(big.requests) / big.cpu_s, big.attainment);
  std::printf("median requests per CPU-second: %.0f (target >= 1000000)\n", median);
  std::printf("peak RSS (ru_maxrss): %.1f MiB (target < 1024 MiB)\n", rss_mib);
  return median >= 1e6 && rss_mib < 1024 ? 0 : 1;
}
