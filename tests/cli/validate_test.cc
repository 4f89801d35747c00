// `aiscale validate` as a user runs it: the built binary on files written to a temp dir.
// Each bad file must exit 1 and name the exact place (file:line:column) and field path.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

namespace aiscale::cli {
namespace {

RunResult RunValidate(const std::string& args) { return RunAiscale("validate " + args); }

std::string TempDir() {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("aiscale_validate_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Lines 1-3 of every controller case; the case's text starts at line 4.
constexpr const char* kHeader =
    "apiVersion: aiscale.dev/v1alpha1\n"
    "kind: ControllerConfig\n"
    "spec:\n";

TEST(Validate, BadControllerConfigsNameThePlace) {
  struct Case {
    const char* name;
    std::string text;      // after kHeader, unless `raw`
    bool raw;              // text is the whole file
    std::string location;  // "line:column: path: " expected after "FILE:"
    std::string message;   // part of the message after the location
  };
  const std::vector<Case> cases = {
      {"malformed yaml", "  period: 15s\n  workloads: [\n    {name: a\n", false,
       "7:1: ", "YAML syntax"},
      {"not a map at top", "- just\n- a list\n", true, "1:1: ", "top level must be a map"},
      {"unknown field",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: Deployment\n"
       "      replicas: 3\n"
       "      policy: {name: static}\n",
       false, "7:7: spec.workloads[0].replicas: ", "unknown field 'replicas'"},
      {"unknown spec field", "  perod: 15s\n  workloads: []\n", false, "4:3: spec.perod: ",
       "unknown field 'perod' (known: period, store, run_dir, server, sources, workloads, "
       "leader_election, aiscalers, pool)"},
      {"wrong type",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: Deployment\n"
       "      max_replicas: lots\n"
       "      policy: {name: static}\n",
       false, "7:21: spec.workloads[0].max_replicas: ", "must be an integer, got 'lots'"},
      {"min above max",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: Deployment\n"
       "      min_replicas: 9\n"
       "      max_replicas: 4\n"
       "      policy: {name: static}\n",
       false,
       "7:21: spec.workloads[0].min_replicas: ", "min_replicas (9) must be <= max_replicas (4)"},
      {"negative period",
       "  period: -5s\n"
       "  workloads:\n"
       "    - {name: a, kind: Deployment, policy: {name: static}}\n",
       false, "4:11: spec.period: ", "must be >= 0.1, got -5"},
      {"negative min_dwell",
       "  workloads:\n"
       "    - name: job\n"
       "      kind: TrainingJob\n"
       "      policy:\n"
       "        name: training\n"
       "        min_dwell: -1h\n",
       false, "9:20: spec.workloads[0].policy.min_dwell: ", "must be >= 0, got -3600"},
      {"negative stabilization window",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: Deployment\n"
       "      behavior:\n"
       "        scaleDown: {stabilizationWindowSeconds: -30}\n"
       "      policy: {name: static}\n",
       false, "8:49: spec.workloads[0].behavior.scaleDown.stabilizationWindowSeconds: ",
       "must be >= 0, got -30"},
      {"group size not dividing max",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: TrainingJob\n"
       "      min_replicas: 4\n"
       "      max_replicas: 10\n"
       "      granularity: 4\n"
       "      policy: {name: static}\n",
       false,
       "9:20: spec.workloads[0].granularity: ", "granularity 4 does not divide max_replicas 10"},
      {"unknown policy name",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: Deployment\n"
       "      policy: {name: magic}\n",
       false, "7:22: spec.workloads[0].policy.name: ", "unknown policy 'magic' (known: "},
      {"policy field error",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: Deployment\n"
       "      policy: {name: static, replicas: -2}\n",
       false, "7:40: spec.workloads[0].policy.replicas: ", "must be >= 0, got -2"},
      {"unknown source",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: Deployment\n"
       "      policy: {name: static}\n"
       "      signals:\n"
       "        - {name: gpu_util, source: carrier-pigeon}\n",
       false, "9:36: spec.workloads[0].signals[0].source: ",
       "no source named 'carrier-pigeon' (defined: none defined in spec.sources)"},
      {"policy signal not bound",
       "  workloads:\n"
       "    - name: a\n"
       "      kind: Deployment\n"
       "      policy:\n"
       "        name: hpa\n"
       "        metrics: [{signal: queue_len, type: Pods, target: {type: AverageValue, value: "
       "5}}]\n"
       "      signals:\n"
       "        - {name: gpu_util, source: prometheus}\n",
       false, "11:9: spec.workloads[0].signals: ",
       "policy hpa reads queue_len but no signal entry binds it"},
      {"duplicate workload",
       "  workloads:\n"
       "    - {name: a, namespace: ns, kind: Deployment, policy: {name: static}}\n"
       "    - {name: a, namespace: ns, kind: Deployment, policy: {name: static}}\n",
       false, "6:14: spec.workloads[1].name: ", "workload 'ns/a' is listed twice"},
      {"wrong api version", "apiVersion: aiscale.dev/v2\nkind: ControllerConfig\nspec: {}\n", true,
       "1:13: apiVersion: ", "must be aiscale.dev/v1alpha1, got 'aiscale.dev/v2'"},
      {"unknown kind", "apiVersion: aiscale.dev/v1alpha1\nkind: Autoscaler\nspec: {}\n", true,
       "2:7: kind: ", "must be one of ControllerConfig, Scenario, got 'Autoscaler'"},
      {"scenario goes to its validator",
       "apiVersion: aiscale.dev/v1alpha1\nkind: Scenario\nspec:\n  not_a_field: 1\n", true,
       "4:3: spec.not_a_field: ", "unknown field 'not_a_field'"},
  };
  int i = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path =
        Write("case" + std::to_string(i++) + ".yaml", c.raw ? c.text : kHeader + c.text);
    const RunResult r = RunValidate(path);
    EXPECT_EQ(r.code, 1) << r.out;
    const std::string want = path + ":" + c.location;
    const size_t at = r.out.find(want);
    ASSERT_NE(at, std::string::npos) << "want " << want << "\ngot:\n" << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find(c.message), std::string::npos) << line;
    EXPECT_EQ(r.out.find(path + ": ok"), std::string::npos);
  }
}

TEST(Validate, ExampleControllerConfigsAreValid) {
  // live-local.yaml is also run as shipped (its header says how); controller.yaml's targets
  // are Kubernetes objects with in-cluster auth, checked here as fields.
  for (const char* name : {"controller.yaml", "live-local.yaml"}) {
    SCOPED_TRACE(name);
    const std::string path = std::string(AISCALE_SOURCE_DIR) + "/examples/" + name;
    const RunResult r = RunValidate(path);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out, path + ": ok\n");
  }
}

TEST(Validate, EveryFileIsCheckedAndOneBadFileFailsTheRun) {
  const std::string good = std::string(AISCALE_SOURCE_DIR) + "/examples/controller.yaml";
  const std::string bad = Write("bad_period.yaml", std::string(kHeader) +
                                                       "  period: soon\n"
                                                       "  workloads: [{name: a, kind: Deployment, "
                                                       "policy: {name: static}}]\n");
  const std::string missing = TempDir() + "/does_not_exist.yaml";
  const RunResult r = RunValidate(bad + " " + good + " " + missing);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(bad + ":4:11: spec.period: must be a duration"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(good + ": ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(missing + ":0:0: unable to read config file " + missing +
                       ": No such file or directory"),
            std::string::npos)
      << r.out;
}

TEST(Validate, UsageErrors) {
  struct Case {
    const char* name;
    std::string args;
    int code;
  };
  const std::vector<Case> cases = {
      {"no files", "", 2}, {"unknown flag", "--frobnicate x", 2}, {"help", "--help", 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const RunResult r = RunValidate(c.args);
    EXPECT_EQ(r.code, c.code) << r.out;
    EXPECT_NE(r.out.find("usage: aiscale validate FILE..."), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace aiscale::cli
