// `aiscale simulate --sweep` as a user runs it: the Azure conversation example cut to its
// first ten minutes, every compared policy over its knob, the frontier printed and written.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace aiscale::cli {
namespace {

namespace fs = std::filesystem;

// The example with its trace found from anywhere and cut to 10 minutes, written under `dir`.
std::string ShortConv(const fs::path& dir) {
  std::ifstream in(std::string(AISCALE_SOURCE_DIR) + "/examples/inference-azure-conv.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string yaml = ss.str();
  const std::string rel = "../../shared/traces";
  yaml.replace(yaml.find(rel), rel.size(), std::string(AISCALE_SHARED_DIR) + "/traces");
  const std::string anchor = "        trace:\n";
  yaml.insert(yaml.find(anchor) + anchor.size(), "          duration_s: 600\n");
  const fs::path file = dir / "conv.yaml";
  std::ofstream(file) << yaml;
  return file.string();
}

TEST(SimulateSweep, PrintsAndWritesEachPolicysFrontier) {
  const fs::path dir = fs::temp_directory_path() / ("aiscale-sweep-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string file = ShortConv(dir);
  const RunResult r =
      RunAiscale("simulate " + file + " --sweep --quiet --out " + (dir / "out").string(), false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("predictive target_utilization=0.4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kpa x0.25"), std::string::npos) << r.out;
  const bool judged =
      r.out.find("predictive dominates kpa") != std::string::npos ||
      r.out.find("predictive does not dominate kpa (unmatched: kpa x") != std::string::npos;
  EXPECT_TRUE(judged) << r.out;
  const bool cheapest =
      r.out.find("kpa: the cheapest run that attains 0.9900 is kpa x") != std::string::npos ||
      r.out.find("kpa: no run attains 0.9900") != std::string::npos;
  EXPECT_TRUE(cheapest) << r.out;
  std::ifstream in(dir / "out" / "report.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  const nlohmann::json& families = j.at("sweep").at("families");
  ASSERT_EQ(families.size(), 6u);  // slo, predictive, hpa, hpa-queue, kpa, static-peak
  size_t points = 0, on_frontier = 0;
  for (const auto& f : families) {
    for (const auto& p : f.at("points")) {
      EXPECT_TRUE(p.at("gpu_hours").is_number()) << p;
      EXPECT_TRUE(p.at("slo_attainment").is_number()) << p;
      ++points;
      on_frontier += p.at("frontier").get<bool>() ? 1 : 0;
    }
  }
  EXPECT_EQ(points, 31u);
  EXPECT_DOUBLE_EQ(j.at("sweep").at("target_attainment").get<double>(), 0.99);
  EXPECT_GE(on_frontier, 5u);  // at least each family's cheapest point that attains most
  // Ordered pairs of families of two policies: hpa and hpa-queue are one policy's settings.
  EXPECT_EQ(j.at("sweep").at("dominance").size(), 18u);
  fs::remove_all(dir);
}

TEST(SimulateSweep, TakesNoPolicyFlag) {
  const RunResult r = RunAiscale("simulate x.yaml --sweep --policy hpa", false);
  EXPECT_EQ(r.code, 2);
  const RunResult e = RunAiscale("simulate x.yaml --sweep --policy hpa");
  EXPECT_NE(e.out.find("--sweep runs the compare list's policies; it takes no --policy"),
            std::string::npos)
      << e.out;
}

}  // namespace
}  // namespace aiscale::cli
