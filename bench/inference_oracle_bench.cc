// inference_oracle_bench: the oracle lower bound (docs/oracle.md) of every real-trace example,
// at several interval lengths, with its parts: the interval and work bounds, which one binds,
// the unservable requests, the attainment it plans for, static-peak, and the seconds it took.
// Not a Google Benchmark: one whole oracle is the unit.
//
//   ./build/inference_oracle_bench                      # all four, intervals 15/60/300/1800 s
//   ./build/inference_oracle_bench azure-code 60 300    # those whose file name has the word
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "inference_examples.h"
#include "sim/inference/inference_spec.h"
#include "sim/inference/oracle.h"
#include "sim/scenario.h"

namespace {

using aiscale::sim::inference::ComputeOracle;
using aiscale::sim::inference::InferenceSpec;
using aiscale::sim::inference::OracleOptions;

int RunOne(const std::string& file, const std::vector<double>& intervals) {
  auto s = aiscale::sim::LoadScenario(std::string(AISCALE_SOURCE_DIR) + "/" + file);
  if (!s.ok()) {
    std::printf("%s: %s\n", file.c_str(), s.status().message().c_str());
    return 1;
  }
  const auto& w = s->workloads.at(0);
  auto spec = InferenceSpec::Parse(w.node.Child("service"), s->scrape_interval_s, s->seed);
  if (!spec) return 1;
  std::printf("\n%s\n  %9s %9s %9s %9s %6s %10s %9s %8s %5s %7s\n", file.c_str(), "interval",
              "GPU-h", "interval", "work", "bound", "unservable", "required", "attain", "peak",
              "wall s");
  for (const double iv : intervals) {
    auto stream = spec->trace->Open();
    if (!stream.ok()) return 1;
    OracleOptions o;
    o.engine = spec->engine;
    o.interval_s = iv;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = ComputeOracle(**stream, o);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok()) {
      std::printf("  %s\n", r.status().message().c_str());
      return 1;
    }
    std::printf("  %9.0f %9.2f %9.2f %9.2f %6s %10llu %9llu %8.4f %5d %7.1f%s\n", iv, r->gpu_hours,
                r->interval_gpu_hours, r->work_gpu_hours, r->bound.c_str(),
                static_cast<unsigned long long>(r->unservable),
                static_cast<unsigned long long>(r->required), r->attainment,
                r->static_peak_replicas, wall, r->feasible ? "" : "  (target out of reach)");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> intervals;
  for (int i = 2; i < argc; ++i) intervals.push_back(std::atof(argv[i]));
  if (intervals.empty()) intervals = {15, 60, 300, 1800};
  return aiscale::bench::ForEachInferenceExample(
      argc, argv, [&](const std::string& f) { return RunOne(f, intervals); });
}
