// The oracle is a lower bound in the simulator itself: on slices of the real traces, every
// policy run that meets the SLO target (the scenario's own compare list: predictive, hpa,
// kpa, static-peak, ...) costs at least the oracle's GPU-hours (docs/oracle.md).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace aiscale::sim {
namespace {

// The example scenario with its trace cut to [start_s, start_s + duration_s), and static runs
// at `sizes` added to its compare list.
Result<Scenario> Slice(const std::string& example, double start_s, double duration_s,
                       const std::vector<int>& sizes) {
  const std::string file = std::string(AISCALE_SOURCE_DIR) + "/examples/" + example;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string anchor = "        trace:\n";
  const size_t at = yaml.find(anchor);
  if (at == std::string::npos) return Status::Error("no trace block in " + file);
  yaml.insert(at + anchor.size(), "          start_s: " + std::to_string(start_s) +
                                      "\n          duration_s: " + std::to_string(duration_s) +
                                      "\n");
  for (const int n : sizes) {
    yaml += "    - {name: static, label: static-" + std::to_string(n) +
            ", replicas: " + std::to_string(n) + "}\n";
  }
  return ParseScenario(yaml, file);
}

TEST(OracleBound, NoRunThatMeetsTheTargetCostsLessThanTheOracle) {
  struct Case {
    std::string example;
    double start_s, duration_s;
    std::vector<int> static_sizes;
  };
  const std::vector<Case> cases = {
      {"inference-azure-code.yaml", 600, 900, {8, 12, 16}},
      {"inference-azure-conv.yaml", 1200, 600, {14, 18, 22}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.example);
    auto s = Slice(c.example, c.start_s, c.duration_s, c.static_sizes);
    ASSERT_TRUE(s.ok()) << s.status().message();
    auto r = RunScenario(*s, RunOptions{});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const nlohmann::json rep = ReportJson(*r);
    int met = 0;
    for (const auto& run : rep["runs"]) {
      SCOPED_TRACE(run.value("policy", ""));
      ASSERT_TRUE(run.contains("oracle_gpu_hours")) << run.dump().substr(0, 300);
      const double target = run["slo"]["attainment"].get<double>();
      if (run["slo_attainment"].get<double>() < target) continue;
      ++met;
      EXPECT_GE(run["gpu_hours"].get<double>(), run["oracle_gpu_hours"].get<double>());
    }
    EXPECT_GE(met, 2) << "too few runs meet the target for the check to say anything";
  }
}

}  // namespace
}  // namespace aiscale::sim
