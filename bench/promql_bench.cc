// PromQL response parsing and PrometheusSource batching, in process (no network):
//  - BM_ParseVector: one /api/v1/query answer of N series shaped like dcgm-exporter's
//    (13 labels each), parsed into series;
//  - BM_FetchBatchTick: one tick of 1,000 workloads x 3 signals sharing 3 templates through
//    PrometheusSource::FetchBatch over an in-memory HttpClient that answers like Prometheus:
//    planning, query building, URL encoding, parsing and routing, per tick.
//
//   ./build/promql_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "monitor/prometheus_source.h"
#include "monitor/promql_response.h"

namespace aiscale::monitor {
namespace {

std::string SeriesJson(int i, const std::string& routing_label, const std::string& name) {
  const std::string n = std::to_string(i);
  return R"({"metric":{"DCGM_FI_DRIVER_VERSION":"535.104.12","Hostname":"gpu-node-)" + n +
         R"(","UUID":"GPU-05fd76a7-f718-d68f-1ed3-)" + n +
         R"(","__name__":"DCGM_FI_DEV_GPU_UTIL","container":"vllm","device":"nvidia0",)"
         R"("gpu":"0","instance":"10.0.3.17:9400","job":"dcgm-exporter",)"
         R"("modelName":"NVIDIA A100-SXM4-80GB","namespace":"serving",")" +
         routing_label + R"(":")" + name + R"(","pod":")" + name +
         R"(-7d9f8b6c5-x2x7q"},)"
         R"("value":[1733203200.123,")" +
         std::to_string(40 + i % 60) + R"(.5"]})";
}

std::string VectorJson(const std::vector<std::string>& names, const std::string& label) {
  std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += SeriesJson(static_cast<int>(i), label, names[i]);
  }
  return out + "]}}";
}

std::vector<std::string> Names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("llm-" + std::to_string(i));
  return out;
}

void BM_ParseVector(benchmark::State& state) {
  const std::string body = VectorJson(Names(static_cast<int>(state.range(0))), "deployment");
  for (auto _ : state) {
    Result<PromQueryResult> r = ParsePromQueryResponse(body);
    if (!r.ok() || r->series.size() != static_cast<size_t>(state.range(0))) {
      state.SkipWithError("parse failed");
    }
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
}
BENCHMARK(BM_ParseVector)->Arg(1000)->Unit(benchmark::kMillisecond);

// Answers every query with one series per workload of the tick, labelled by `deployment` —
// what Prometheus returns for a batched `sum by (pod, deployment)`.
class CannedPrometheus final : public HttpClient {
 public:
  explicit CannedPrometheus(std::string body) : body_(std::move(body)) {}
  Result<HttpResponse> Send(const HttpRequest&) override {
    HttpResponse r;
    r.status = 200;
    r.body = body_;
    return r;
  }

 private:
  std::string body_;
};

void BM_FetchBatchTick(benchmark::State& state) {
  const std::vector<std::string> names = Names(1000);
  CannedPrometheus http(VectorJson(names, "deployment"));
  PrometheusSourceConfig cfg;
  cfg.url = "http://127.0.0.1:9090";
  PrometheusSource src(cfg, http);
  const std::vector<std::string> templates = {
      R"(sum by (pod, deployment) (rate(vllm:request_success_total{deployment="{workload}"}[1m])))",
      R"(sum by (pod, deployment) (vllm:num_requests_waiting{deployment="{workload}"}))",
      R"(max by (pod, deployment) (vllm:gpu_cache_usage_perc{deployment="{workload}"}))"};
  std::vector<MetricQuery> qs;
  for (const std::string& n : names) {
    for (size_t t = 0; t < templates.size(); ++t) {
      qs.push_back({{"Deployment", "serving", n}, "s" + std::to_string(t), templates[t]});
    }
  }
  for (auto _ : state) {
    std::vector<FetchResult> out = src.FetchBatch(qs, TimePoint{});
    if (!out.back().ok() || out.back()->size() != 1) state.SkipWithError("routing failed");
    benchmark::DoNotOptimize(out);
  }
  state.counters["queries"] = static_cast<double>(qs.size());
}
BENCHMARK(BM_FetchBatchTick)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiscale::monitor

BENCHMARK_MAIN();
