// inference_targets_bench: the issue-3 policy targets, measured side by side in one run. Runs
// each real-trace inference scenario under examples/ with its own `compare` list (predictive,
// hpa, kpa, static-peak; same seed, same arrivals), prints one row per policy and, for the
// default policy (predictive), one line per target with the measured value and MET / NOT MET
// (the verdict report.json carries as vs_targets, with its why_not). Not a Google Benchmark:
// a whole replay is the unit.
//
//   ./build/inference_targets_bench            # all four scenarios (~30 s)
//   ./build/inference_targets_bench azure-conv  # those whose file name contains the word
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace {

int RunOne(const std::string& file) {
  const auto t0 = std::chrono::steady_clock::now();
  auto s = aiscale::sim::LoadScenario(std::string(AISCALE_SOURCE_DIR) + "/" + file);
  if (!s.ok()) {
    std::printf("%s: %s\n", file.c_str(), s.status().message().c_str());
    return 1;
  }
  auto r = aiscale::sim::RunScenario(*s, aiscale::sim::RunOptions{});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) {
    std::printf("%s: %s\n", file.c_str(), r.status().message().c_str());
    return 1;
  }
  const nlohmann::json rep = aiscale::sim::ReportJson(*r);
  const auto& runs = rep["runs"];
  std::printf("\n%s (%s), wall %.1f s; oracle %.1f GPU-h at attainment %.4f\n", r->scenario.c_str(),
              file.c_str(), wall, runs[0].value("oracle_gpu_hours", 0.0),
              runs[0].value("oracle_attainment", 0.0));
  std::printf("  %-12s %10s %8s %8s %8s %8s\n", "policy", "GPU-h", "/oracle", "SLO", "p99 s",
              "TTFT99");
  for (const auto& e : runs) {
    std::printf("  %-12s %10.1f %8.2f %8.4f %8.2f %8.2f\n", e.value("policy", "").c_str(),
                e.value("gpu_hours", 0.0), e.value("gpu_hours_over_oracle", 0.0),
                e.value("slo_attainment", 0.0), e.value("latency_p99_s", 0.0),
                e.value("ttft_p99_s", 0.0));
  }
  for (const auto& e : runs) {
    if (e.value("policy", "") != "predictive" || !e.contains("vs_targets")) continue;
    for (const auto& t : e["vs_targets"]["targets"]) {
      std::printf("  predictive %-34s %9.3f  target %-6g %s\n",
                  t["name"].get<std::string>().c_str(), t["measured"].get<double>(),
                  t["target"].get<double>(), t["met"].get<bool>() ? "MET" : "NOT MET");
    }
    if (e["vs_targets"].contains("why_not")) {
      std::printf("  why: %s\n", e["vs_targets"]["why_not"].get<std::string>().c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> files = {
      "examples/inference-azure-code.yaml", "examples/inference-azure-conv.yaml",
      "examples/inference-mooncake.yaml", "examples/inference-alibaba-genai.yaml"};
  int rc = 0;
  for (const auto& f : files) {
    if (argc > 1 && f.find(argv[1]) == std::string::npos) continue;
    rc |= RunOne(f);
  }
  return rc;
}
