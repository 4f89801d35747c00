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

#include "inference_examples.h"
#include "report/run_summary.h"
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
  const aiscale::report::Report rep = aiscale::sim::BuildReport(*r);
  const aiscale::report::WorkloadSummary first = rep.runs[0].Totals();
  std::printf("\n%s (%s), wall %.1f s; oracle %.1f GPU-h at attainment %.4f\n", r->scenario.c_str(),
              file.c_str(), wall, first.oracle ? first.oracle->gpu_hours : 0.0,
              first.oracle ? first.oracle->attainment : 0.0);
  std::printf("  %-12s %10s %8s %8s %8s %8s\n", "policy", "GPU-h", "/oracle", "SLO", "p99 s",
              "TTFT99");
  for (const auto& run : rep.runs) {
    const aiscale::report::WorkloadSummary w = run.Totals();
    const double o = w.oracle ? w.oracle->gpu_hours : 0;
    const aiscale::report::ServingFigures f = w.serving.value_or(aiscale::report::ServingFigures{});
    std::printf("  %-12s %10.1f %8.2f %8.4f %8.2f %8.2f\n", run.label.c_str(), w.gpu_hours,
                o > 0 ? w.gpu_hours / o : 0.0, f.slo_attainment, f.latency_p99_s, f.ttft_p99_s);
  }
  for (const auto& run : rep.runs) {
    const aiscale::report::WorkloadSummary w = run.Totals();
    if (run.label != "predictive" || !w.verdict) continue;
    for (const auto& t : w.verdict->targets) {
      std::printf("  predictive %-34s %9.3f  target %-6g %s\n", t.name.c_str(), t.measured,
                  t.target, t.met ? "MET" : "NOT MET");
    }
    if (!w.verdict->why_not.empty()) std::printf("  why: %s\n", w.verdict->why_not.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return aiscale::bench::ForEachInferenceExample(argc, argv, RunOne);
}
