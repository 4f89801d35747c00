#include "sim/scenario.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/fixtures.h"

namespace aiscale::sim {
namespace {

// The shared valid training scenario with line `line` (1-based) replaced by `text`.
std::string With(int line, const std::string& text) {
  return fixtures::EditLines(fixtures::kTrainingScenario, {{line, text}});
}

TEST(Scenario, TheBaseIsValid) {
  auto s = ParseScenario(With(0, ""), "s.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "t");
  EXPECT_DOUBLE_EQ(s->duration_s, 36000);
  ASSERT_EQ(s->workloads.size(), 1u);
  EXPECT_EQ(s->workloads[0].initial_replicas, 2);
  auto runs = s->Runs({});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].label, "static");
}

TEST(Scenario, EveryErrorNamesFileLineColumnAndPath) {
  struct Case {
    std::string name;
    int line;
    std::string text;
    std::string want;  // substring of the error message
  };
  const std::vector<Case> cases = {
      {"unknown spec field", 6, "  durations: 10h", "s.yaml:6:3: spec.durations: unknown field"},
      {"wrong type", 5, "  seed: abc", "s.yaml:5:9: spec.seed: must be a finite number"},
      {"min > max", 14, "      min_replicas: 5",
       "s.yaml:14:21: spec.workloads[0].min_replicas: min_replicas (5) must be <= max_replicas "
       "(4)"},
      {"group size not dividing max", 16, "      granularity: 3",
       "s.yaml:16:20: spec.workloads[0].granularity: granularity 3 does not divide max_replicas 4"},
      {"zero capacity", 8, "    nodes: 0", "s.yaml:8:12: spec.cluster.nodes: must be >= 1"},
      {"negative delay", 10, "    provisioning_delay: -5s",
       "s.yaml:10:25: spec.cluster.provisioning_delay: must be >= 0"},
      {"unknown kind", 13, "      kind: Batch",
       "s.yaml:13:13: spec.workloads[0].kind: unknown workload kind 'Batch'"},
      {"unknown policy", 18, "      policy: {name: magic}",
       "s.yaml:18:22: spec.workloads[0].policy.name: unknown policy 'magic'"},
      {"unknown compare policy", 22, "  compare: [static, magic]",
       "s.yaml:22:21: spec.compare[1]: unknown policy 'magic'"},
      {"initial out of range", 17, "      initial_replicas: 9",
       "s.yaml:17:25: spec.workloads[0].initial_replicas: initial_replicas 9 must be within"},
      {"unknown job field", 21, "        epoch: 2",
       "s.yaml:21:9: spec.workloads[0].job.epoch: unknown field"},
      {"job without steps", 20, "        model: x",
       "spec.workloads[0].job: give exactly one of total_steps or total_samples"},
      {"bad util range", 21, "        compute: {util: [0.9, 0.5]}",
       "s.yaml:21:25: spec.workloads[0].job.compute.util: lo must be <= hi"},
      {"negative restart", 21, "        restart: {restore: -1s}",
       "spec.workloads[0].job.restart.restore: must be >= 0"},
      {"bad header", 1, "apiVersion: v2", "s.yaml:1:13: apiVersion:"},
      {"malformed yaml", 18, "      policy: {name: static", "s.yaml:"},
      {"missing policy", 18, "      policyy: {name: static}",
       "spec.workloads[0].policyy: unknown field"},
      {"compared policy that needs fields", 22, "  compare: [static, hpa]",
       "s.yaml:22:21: spec.compare[1]: policy 'hpa' for workload j:"},
      {"no cluster", 7, "  cluster_x:", "spec.cluster_x: unknown field"},
      {"failure on unknown workload", 22, "  failures: [{at: 1h, workload: nope}]",
       "spec.failures: failure names workload 'nope'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto s = ParseScenario(With(c.line, c.text), "s.yaml");
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_NE(s.status().message().find(c.want), std::string::npos) << s.status().message();
    // Every line of the error text carries a position.
    std::istringstream lines(s.status().message());
    for (std::string l; std::getline(lines, l);) EXPECT_EQ(l.rfind("s.yaml:", 0), 0u) << l;
  }
}

TEST(Scenario, ReportsEveryErrorNotJustTheFirst) {
  std::string text = With(5, "  seed: abc");
  text += "  bogus: 1\n";
  auto s = ParseScenario(text, "s.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("spec.seed"), std::string::npos);
  EXPECT_NE(s.status().message().find("spec.bogus"), std::string::npos);
}

TEST(Scenario, ValidateScenarioRecordsIntoTheCallersErrors) {
  config::ConfigErrors errs;
  auto root = config::ParseConfig(With(14, "      min_replicas: 5"), "v.yaml", errs);
  EXPECT_FALSE(ValidateScenario(root).ok());
  ASSERT_FALSE(errs.empty());
  EXPECT_EQ(errs.all()[0].file, "v.yaml");
  EXPECT_EQ(errs.all()[0].line, 14);
  config::ConfigErrors ok_errs;
  auto ok_root = config::ParseConfig(With(0, ""), "v.yaml", ok_errs);
  EXPECT_TRUE(ValidateScenario(ok_root).ok()) << ok_errs.ToStatus().message();
}

TEST(Scenario, RunsResolveStaticToInitialSizeAndKeepOwnPolicyParameters) {
  auto s = ParseScenario(With(22, "  compare: [static, training]"), "s.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto runs = s->Runs({"static"});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].policy_nodes[0].Int("replicas", -1), 2);
  auto twice = s->Runs({"static", "static"});
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ((*twice)[1].label, "static-2");
}

TEST(Scenario, CompareEntriesMayCarryALabel) {
  struct Case {
    std::string compare;
    std::vector<std::string> want_labels;  // empty: an error is expected
    std::string want_error;
  };
  const std::vector<Case> cases = {
      {"  compare: [{name: static, replicas: 2, label: two}, {name: static, replicas: 3, "
       "label: three}]",
       {"two", "three"},
       ""},
      {"  compare: [{name: static, replicas: 2}, {name: static, replicas: 3}]",
       {"static", "static-2"},
       ""},
      {"  compare: [{name: static, replicas: 2, label: ''}]", {}, "label: must not be empty"},
      {"  compare: [{name: static, label: a/b}, hpa, {name: static, replicas: 3, label: a_b}]",
       {},
       "s.yaml:22:46: spec.compare[2]: label 'a_b' and the compare entry at line 22 ('a/b') "
       "would both write decisions-a_b.jsonl"},
      {"  compare: [" +
           [] {
             std::string list = "static";
             for (int i = 0; i < 64; ++i) list += ", static";
             return list;
           }() +
           "]",
       {},
       "spec.compare: lists 65 policies; at most 64 (each is a run of the whole scenario)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.compare);
    auto s = ParseScenario(With(22, c.compare), "s.yaml");
    if (c.want_labels.empty()) {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.status().message().find(c.want_error), std::string::npos) << s.status().message();
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.status().message();
    auto runs = s->Runs({});
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), c.want_labels.size());
    for (size_t i = 0; i < runs->size(); ++i) {
      EXPECT_EQ((*runs)[i].label, c.want_labels[i]);
      // The label is the scenario's: the policy's node no longer has it.
      EXPECT_FALSE((*runs)[i].policy_nodes[0].Has("label"));
    }
  }
}

// `simulate --policy NAME` runs the compare entry labelled NAME, with its parameters (issue 27
// §5: --policy kpa ran a default KPA, --policy hpa failed for want of metrics, --policy
// hpa-queue was unknown); a policy it does not compare runs with its defaults, and a name that
// is neither is an error listing the labels it compares.
TEST(Scenario, PolicyFlagSelectsTheCompareEntryWithThatLabel) {
  const std::string compare =
      "  compare: [{name: static, replicas: 3, label: three}, {name: training, rescale_burst: 4}, "
      "{name: static, replicas: 1}]";
  auto s = ParseScenario(With(22, compare), "s.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  struct Case {
    std::string policy;
    std::string label;      // of the run; empty: an error is expected
    std::string check_key;  // a field of the run's policy node
    double check_value;
    std::string want_error;
  };
  const std::vector<Case> cases = {
      {"three", "three", "replicas", 3, ""},
      {"training", "training", "rescale_burst", 4, ""},  // the entry's field, not the default
      {"static", "static", "replicas", 1, ""},           // the entry labelled static (line order)
      {"kpa", "kpa", "target", -1, ""},  // not compared here: a registered policy, defaults
      {"hpa-queue", "", "", 0,
       "unknown policy 'hpa-queue' for --policy: s.yaml compares three, training, static (by "
       "label), and any policy ("},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.policy);
    auto runs = s->Runs({c.policy});
    if (c.label.empty()) {
      ASSERT_FALSE(runs.ok());
      EXPECT_NE(runs.status().message().find(c.want_error), std::string::npos)
          << runs.status().message();
      continue;
    }
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ((*runs)[0].label, c.label);
    EXPECT_DOUBLE_EQ((*runs)[0].policy_nodes[0].Number(c.check_key, -1), c.check_value);
  }
}

TEST(Scenario, ShippedExamplesAreValid) {
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(AISCALE_SOURCE_DIR) / "examples")) {
    if (e.path().extension() != ".yaml") continue;
    std::ifstream f(e.path());
    std::string head;
    std::getline(f, head, '\0');
    if (head.find("kind: Scenario") == std::string::npos) continue;
    SCOPED_TRACE(e.path().string());
    auto s = LoadScenario(e.path().string());
    EXPECT_TRUE(s.ok()) << s.status().message();
    ++n;
  }
  EXPECT_GE(n, 1);
}

}  // namespace
}  // namespace aiscale::sim
