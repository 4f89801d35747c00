// demo_bench: the demo's training targets (issue 10's against the oracle, then the seed's
// figures against static), measured. Runs the demo scenario and the two other
// training scenarios (training vs static, same seed), times each, and prints one table row
// per target with the measured value and whether it holds. Not a Google Benchmark: a whole
// simulation is the unit, and the targets are ratios between two runs.
//
//   ./build/demo_bench            # exit 0 always; the table says which targets hold
#include <chrono>
#include <cstdio>
#include <string>

#include "report/run_summary.h"
#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace {

using aiscale::report::RunSummary;
using aiscale::report::WorkloadSummary;

void PrintLine(const char* name, double value, const char* op, double bound, bool met) {
  std::printf("  %-42s %10.3f  target %s %-6g  %s\n", name, value, op, bound,
              met ? "MET" : "NOT MET");
}

int RunOne(const std::string& file, bool all_targets) {
  const auto t0 = std::chrono::steady_clock::now();
  auto s = aiscale::sim::LoadScenario(std::string(AISCALE_SOURCE_DIR) + "/" + file);
  if (!s.ok()) {
    std::printf("%s: %s\n", file.c_str(), s.status().message().c_str());
    return 1;
  }
  aiscale::sim::RunOptions opt;
  opt.policies = {"training", "static"};
  auto r = aiscale::sim::RunScenario(*s, opt);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) {
    std::printf("%s: %s\n", file.c_str(), r.status().message().c_str());
    return 1;
  }
  const aiscale::report::Report rep = aiscale::sim::BuildReport(*r);
  const RunSummary& tr_run = rep.runs[0];
  const WorkloadSummary tr = tr_run.Totals(), st = rep.runs[1].Totals();
  std::printf("\n%s (%s)%s\n", r->scenario.c_str(), file.c_str(),
              tr_run.cut || rep.runs[1].cut ? "  [a run was cut]" : "");
  std::printf(
      "  training: %.1f GPU-h, %.2f h, util %.3f, %d rescales | static: %.1f GPU-h, "
      "%.2f h, util %.3f | wall %.2f s\n",
      tr.gpu_hours, tr.completion_time_s / 3600, tr.mean_gpu_util, tr.rescales, st.gpu_hours,
      st.completion_time_s / 3600, st.mean_gpu_util, wall);
  if (all_targets) {
    // The scenario's own targets (its `targets:`), as report.json judges them.
    if (tr.verdict) {
      for (const auto& t : tr.verdict->targets) {
        PrintLine(t.name.c_str(), t.measured, "vs", t.target, t.met || !t.Required());
      }
    }
    PrintLine("demo wall time (s, both runs)", wall, "<=", 10, wall <= 10);
  } else if (tr_run.vs_static) {
    // Issue 2: on other scenarios the policy must still beat static on GPU-hours without
    // losing more than 10% speed. Within 1% is noise, not a win.
    const auto& v = *tr_run.vs_static;
    PrintLine("GPU-hours training/static (beats by >= 1%)", v.gpu_hours_ratio, "<=", 0.99,
              v.gpu_hours_ratio <= 0.99);
    PrintLine("completion time training/static", v.completion_ratio, "<=", 1.10,
              v.completion_ratio <= 1.10);
  }
  return 0;
}

}  // namespace

int main() {
  int rc = 0;
  rc |= RunOne("examples/demo-bert-large.yaml", true);
  rc |= RunOne("examples/training-gpt-1b.yaml", false);
  rc |= RunOne("examples/training-resnet.yaml", false);
  return rc;
}
