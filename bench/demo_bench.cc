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
#include <vector>

#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace {

struct Target {
  const char* name;
  double value;
  const char* op;
  double bound;
  bool Holds() const {
    const std::string o = op;
    if (o == "<") return value < bound;
    return o == "<=" ? value <= bound : value >= bound;
  }
};

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
  const auto tr = aiscale::sim::RunEntry(r->runs[0]);
  const auto st = aiscale::sim::RunEntry(r->runs[1]);
  auto num = [](const nlohmann::json& j, const char* k) { return j.value(k, 0.0); };
  const double gpu_ratio = num(tr, "gpu_hours") / num(st, "gpu_hours");
  const double time_ratio = num(tr, "completion_time_s") / num(st, "completion_time_s");
  std::vector<Target> targets;
  if (all_targets) {
    // Issue 10: against the offline oracle (training_targets_bench prints every target of
    // every training scenario; this is the demo's short form).
    const double over_oracle = num(tr, "gpu_hours_over_oracle");
    targets.push_back({"GPU-hours training/oracle", over_oracle, "<=", 1.05});
    targets.push_back({"completion time training/static", time_ratio, "<=", 1.10});
    const double hours = num(tr, "completion_time_s") / 3600;
    const double chosen = tr.value("policy_rescales", 0) / (hours > 0 ? hours : 1);
    targets.push_back({"rescales per hour (policy's, training)", chosen, "<=", 1.0});
    targets.push_back(
        {"failed node replaced (s, training)", num(tr, "max_failure_replacement_s"), "<=", 600});
    targets.push_back({"demo wall time (s, both runs)", wall, "<=", 10});
    targets.push_back({"GPU-hours training/static (seed)", gpu_ratio, "<=", 0.70});
    targets.push_back({"mean GPU utilization (seed)", num(tr, "mean_gpu_util"), ">=", 0.80});
  } else {
    // Issue 2: on other scenarios the policy must still beat static on GPU-hours without
    // losing more than 10% speed. Within 1% is noise, not a win.
    targets.push_back({"GPU-hours training/static (beats by >= 1%)", gpu_ratio, "<=", 0.99});
    targets.push_back({"completion time training/static", time_ratio, "<=", 1.10});
  }
  std::printf("\n%s (%s)%s\n", r->scenario.c_str(), file.c_str(),
              tr.value("cut", false) || st.value("cut", false) ? "  [a run was cut]" : "");
  std::printf(
      "  training: %.1f GPU-h, %.2f h, util %.3f, %d rescales | static: %.1f GPU-h, "
      "%.2f h, util %.3f | wall %.2f s\n",
      num(tr, "gpu_hours"), num(tr, "completion_time_s") / 3600, num(tr, "mean_gpu_util"),
      tr.value("rescales", 0), num(st, "gpu_hours"), num(st, "completion_time_s") / 3600,
      num(st, "mean_gpu_util"), wall);
  for (const auto& t : targets) {
    std::printf("  %-42s %10.3f  target %s %-6g  %s\n", t.name, t.value, t.op, t.bound,
                t.Holds() ? "MET" : "NOT MET");
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
