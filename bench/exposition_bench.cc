// Parsing a realistic multi-MB exposition (dcgm-exporter and vLLM shapes, many series): the
// issue-7 target is >= 100 MB/s on one core, so scraping a fleet's endpoints every few seconds
// costs next to nothing. Also evaluates a window p99 over two parsed scrapes.
//
//   ninja -C build exposition_bench && ./build/exposition_bench
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "monitor/exposition_parser.h"
#include "monitor/presets.h"
#include "monitor/scrape_eval.h"

namespace aiscale::monitor {
namespace {

// dcgm-exporter on `nodes` 8-GPU nodes (as a federating endpoint would serve it): the
// exporter's label set, 12 gauge fields per GPU.
void AppendDcgm(std::string& out, int nodes) {
  static const char* kFields[] = {
      "DCGM_FI_DEV_SM_CLOCK",    "DCGM_FI_DEV_MEM_CLOCK",    "DCGM_FI_DEV_GPU_TEMP",
      "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",     "DCGM_FI_DEV_MEM_COPY_UTIL",
      "DCGM_FI_DEV_FB_FREE",     "DCGM_FI_DEV_FB_USED",      "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
      "DCGM_FI_PROF_SM_ACTIVE",  "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"};
  for (const char* f : kFields) {
    out += "# HELP " + std::string(f) + " Field from DCGM.\n# TYPE " + f + " gauge\n";
    for (int n = 0; n < nodes; ++n) {
      for (int g = 0; g < 8; ++g) {
        out += std::string(f) + "{gpu=\"" + std::to_string(g) +
               "\",UUID=\"GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e" + std::to_string(10 + g) +
               "\",pci_bus_id=\"00000000:0" + std::to_string(g) + ":00.0\",device=\"nvidia" +
               std::to_string(g) + "\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node" +
               std::to_string(n) + "\",container=\"main\",namespace=\"ml\",pod=\"bert-" +
               std::to_string(n) + "\"} " + std::to_string(0.5 + n * 0.25 + g) + "\n";
      }
    }
  }
}

// vLLM servers (model_name, engine labels): gauges, a counter by finished_reason and the
// TTFT / e2e histograms with vLLM's bucket layouts.
void AppendVllm(std::string& out, int servers, double scale) {
  static const char* kTtft[] = {"0.001", "0.005", "0.01",  "0.02",   "0.04", "0.06",
                                "0.08",  "0.1",   "0.25",  "0.5",    "0.75", "1.0",
                                "2.5",   "5.0",   "7.5",   "10.0",   "20.0", "40.0",
                                "80.0",  "160.0", "640.0", "2560.0", "+Inf"};
  out +=
      "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
      "# TYPE vllm:num_requests_running gauge\n";
  for (int s = 0; s < servers; ++s) {
    out += "vllm:num_requests_running{engine=\"0\",model_name=\"llama-" + std::to_string(s) +
           "\"} " + std::to_string(s % 17) + ".0\n";
  }
  out +=
      "# HELP vllm:request_success_total Count of successfully processed requests.\n"
      "# TYPE vllm:request_success_total counter\n";
  for (int s = 0; s < servers; ++s) {
    for (const char* r : {"stop", "length", "abort"}) {
      out += "vllm:request_success_total{engine=\"0\",finished_reason=\"" + std::string(r) +
             "\",model_name=\"llama-" + std::to_string(s) + "\"} " +
             std::to_string(1000 * scale + s) + "\n";
    }
  }
  out +=
      "# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.\n"
      "# TYPE vllm:time_to_first_token_seconds histogram\n";
  for (int s = 0; s < servers; ++s) {
    const std::string base = "engine=\"0\",model_name=\"llama-" + std::to_string(s) + "\"";
    double c = 0;
    for (const char* le : kTtft) {
      c += 3 * scale;
      out += "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"" + std::string(le) +
             "\",model_name=\"llama-" + std::to_string(s) + "\"} " + std::to_string(c) + "\n";
    }
    out += "vllm:time_to_first_token_seconds_count{" + base + "} " + std::to_string(c) + "\n";
    out += "vllm:time_to_first_token_seconds_sum{" + base + "} 50.003501176834106\n";
  }
}

std::string Payload(double scale) {
  std::string out;
  AppendDcgm(out, 256);          // 256 nodes x 8 GPUs x 12 fields
  AppendVllm(out, 1024, scale);  // 1024 servers
  return out;
}

void BM_ParseExposition(benchmark::State& state) {
  const std::string text = Payload(1);
  size_t samples = 0;
  for (auto _ : state) {
    auto e = ParseExposition(text, ExpositionFormat::kPrometheusText);
    if (!e.ok()) state.SkipWithError(e.status().message().c_str());
    samples = e.ok() ? e->samples().size() : 0;
    benchmark::DoNotOptimize(samples);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
  state.counters["samples"] = static_cast<double>(samples);
}
BENCHMARK(BM_ParseExposition)->Unit(benchmark::kMillisecond);

void BM_WindowP99(benchmark::State& state) {
  auto a = ParseExposition(Payload(1), ExpositionFormat::kPrometheusText);
  auto b = ParseExposition(Payload(2), ExpositionFormat::kPrometheusText);
  std::vector<Scrape> history = {
      {AtSeconds(0), std::make_shared<const Exposition>(std::move(a).value())},
      {AtSeconds(30), std::make_shared<const Exposition>(std::move(b).value())}};
  const PresetSignal* ttft = FindPreset("vllm")->Find("ttft_p99_s");
  for (auto _ : state) {
    auto r = EvaluatePresetSignal(*ttft, history);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_WindowP99)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aiscale::monitor

BENCHMARK_MAIN();
