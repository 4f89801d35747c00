#include "report/targets.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::report {
namespace {

struct Parsed {
  Targets targets;
  std::string errors;
};

Parsed Parse(const std::string& yaml) {
  config::ConfigErrors errs;
  const config::ConfigNode root = config::ParseConfig(yaml, "s.yaml", errs);
  Parsed p{ParseTargets(root.Child("targets")), ""};
  if (!errs.empty()) p.errors = errs.ToStatus().message();
  return p;
}

TEST(Targets, ReadsEveryTarget) {
  const Parsed p = Parse(
      "targets:\n"
      "  gpu_hours_over_oracle: 1.05\n"
      "  completion_vs_static: 1.1\n"
      "  rescales_per_hour: 1\n"
      "  failure_replaced_s: 10m\n"
      "  seed_gpu_hours_vs_static: 0.7\n"
      "  seed_mean_gpu_util: 0.8\n"
      "  seed_speed_vs_static: 0.9\n"
      "  slo_attainment: slo\n"
      "  no_worse_than: [hpa, kpa]\n"
      "  fewer_gpu_hours_than_static_peak: 0.3\n");
  ASSERT_EQ(p.errors, "");
  EXPECT_DOUBLE_EQ(p.targets.gpu_hours_over_oracle.value_or(0), 1.05);
  EXPECT_DOUBLE_EQ(p.targets.failure_replaced_s.value_or(0), 600);
  EXPECT_TRUE(p.targets.slo_from_service);
  EXPECT_FALSE(p.targets.slo_attainment.has_value());
  EXPECT_EQ(p.targets.no_worse_than, (std::vector<std::string>{"hpa", "kpa"}));
  EXPECT_FALSE(p.targets.empty());
  const Parsed fixed = Parse("targets: {slo_attainment: 0.95}\n");
  EXPECT_DOUBLE_EQ(fixed.targets.slo_attainment.value_or(0), 0.95);
  EXPECT_FALSE(fixed.targets.slo_from_service);
}

TEST(Targets, AbsentMeansNoneJudged) {
  EXPECT_TRUE(Parse("other: 1\n").targets.empty());
  EXPECT_TRUE(Parse("targets: {}\n").targets.empty());
}

TEST(Targets, BadInputSaysWhere) {
  struct Case {
    std::string yaml;
    std::string error;  // substring
  };
  const std::vector<Case> cases = {
      {"targets:\n  gpu_hours_over_orcale: 1.1\n", "s.yaml:2:3: targets.gpu_hours_over_orcale"},
      {"targets:\n  gpu_hours_over_oracle: 0\n", "targets.gpu_hours_over_oracle"},
      {"targets:\n  seed_mean_gpu_util: 1.5\n", "targets.seed_mean_gpu_util"},
      {"targets:\n  slo_attainment: always\n", "targets.slo_attainment"},
      {"targets:\n  no_worse_than: [hpa, {a: 1}]\n", "targets.no_worse_than[1]"},
      {"targets: [1, 2]\n", "targets must be a map"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    const Parsed p = Parse(c.yaml);
    EXPECT_NE(p.errors.find(c.error), std::string::npos) << p.errors;
  }
}

}  // namespace
}  // namespace aiscale::report
