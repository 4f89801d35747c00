// `aiscale conformance hpa`: every shared hpa_*.json vector file and the project's own
// tests/conformance/hpa_*.json must pass; malformed files are errors naming the place, and
// unrepresentable or wrong cases count as failures.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cli/conformance_hpa_eval.h"
#include "fakes/vector_files.h"

namespace aiscale::cli {
namespace {

namespace fs = std::filesystem;

using ::aiscale::testing::SharedDir;

std::vector<fs::path> VectorFiles(const fs::path& dir) {
  return ::aiscale::testing::VectorFiles(dir, "hpa_");
}

void ExpectAllPass(const std::vector<fs::path>& files) {
  ASSERT_FALSE(files.empty());
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    auto r = EvaluateHpaVectorsFile(f.string());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_GT(r->cases.size(), 0u);
    for (const HpaCaseOutcome& c : r->cases) EXPECT_TRUE(c.passed) << c.Line();
    EXPECT_EQ(r->failed, 0) << r->Summary();
    EXPECT_EQ(r->passed, static_cast<int>(r->cases.size()));
  }
}

TEST(ConformanceHpa, SharedVectorsAllPass) {
  ExpectAllPass(VectorFiles(fs::path(SharedDir()) / "conformance"));
}

TEST(ConformanceHpa, ProjectVectorsAllPass) {
  const auto files = VectorFiles(fs::path(AISCALE_SOURCE_DIR) / "tests" / "conformance");
  ExpectAllPass(files);
  // The project's own file covers the behavior step the shared file does not.
  bool behavior = false;
  for (const auto& f : files) behavior = behavior || f.filename() == "hpa_behavior.json";
  EXPECT_TRUE(behavior);
}

const char* kGood = R"({"name": "ok", "step": "replicas", "currentReplicas": 2,
  "metric": {"type": "Pods", "target": {"type": "AverageValue", "value": 1000}},
  "pods": [{"name": "a", "value": 2000}, {"name": "b", "value": 2000}],
  "expectedReplicas": 4})";

std::string File(const std::string& cases) {
  return R"({"kind": "hpa", "cases": [)" + cases + "]}";
}

TEST(ConformanceHpa, MalformedInputIsAnErrorNamingThePlace) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"{not json", {"f.json", "not valid JSON"}},
      {R"({"kind": "kpa", "cases": []})", {"f.json", "kind"}},
      {R"({"kind": "hpa"})", {"cases"}},
      {File(std::string(kGood) + R"(, {"name": "bad", "step": "replicas",
         "metric": {"type": "Pods", "target": {"type": "AverageValue", "value": 1}},
         "expectedReplicas": 1})"),
       {"f.json", "case 1 (bad)", "currentReplicas"}},
      {File(R"({"name": "typed", "currentReplicas": "three", "expectedReplicas": 1,
         "metric": {"type": "Pods", "target": {"type": "AverageValue", "value": 1}}})"),
       {"case 0 (typed)", "currentReplicas", "number"}},
      {File(R"({"name": "podfield", "currentReplicas": 1, "expectedReplicas": 1,
         "metric": {"type": "Pods", "target": {"type": "AverageValue", "value": 1}},
         "pods": [{"value": "x"}]})"),
       {"case 0 (podfield)", "pods[0].value"}},
      {File(R"({"name": "beh", "step": "behavior", "currentReplicas": 1, "recommendation": 2,
         "expectedReplicas": 2, "history": [{"replicas": 3}]})"),
       {"case 0 (beh)", "maxReplicas"}},
  };
  for (const auto& [text, needles] : cases) {
    SCOPED_TRACE(text);
    auto r = EvaluateHpaVectors(text, "f.json");
    ASSERT_FALSE(r.ok());
    for (const std::string& n : needles) {
      EXPECT_NE(r.status().message().find(n), std::string::npos) << r.status().message();
    }
  }
}

TEST(ConformanceHpa, WrongOrUnrepresentableCasesFail) {
  const std::string text = File(std::string(kGood) + "," +
                                R"({"name": "wrong", "currentReplicas": 2,
    "metric": {"type": "Pods", "target": {"type": "AverageValue", "value": 1000}},
    "pods": [{"value": 2000}, {"value": 2000}], "expectedReplicas": 5},
   {"name": "container", "currentReplicas": 2,
    "metric": {"type": "ContainerResource", "target": {"type": "Utilization", "value": 50}},
    "pods": [{"value": 2000}], "expectedReplicas": 4},
   {"name": "util", "currentReplicas": 1, "resource": "cpu",
    "metric": {"type": "Resource", "target": {"type": "Utilization", "value": 50}},
    "pods": [{"value": 500, "request": 1000}], "expectedReplicas": 1, "expectedUtilization": 40},
   {"name": "step", "step": "scale", "expectedReplicas": 1},
   {"name": "badbehavior", "step": "behavior", "minReplicas": 1, "maxReplicas": 5,
    "currentReplicas": 2, "recommendation": 3, "expectedReplicas": 3,
    "behavior": {"scaleUp": {"stabilizationWindowSeconds": -1}}},
   {"name": "noerror", "currentReplicas": 2,
    "metric": {"type": "Pods", "target": {"type": "AverageValue", "value": 1000}},
    "pods": [], "expectedReplicas": 2})");
  auto r = EvaluateHpaVectors(text, "f.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cases.size(), 7u);
  EXPECT_EQ(r->passed, 1);
  EXPECT_EQ(r->failed, 6);
  EXPECT_EQ(r->cases[0].Line(), "PASS ok");
  EXPECT_EQ(r->cases[1].Line(), "FAIL wrong: expected 5 got 4");
  EXPECT_NE(r->cases[2].detail.find("cannot represent"), std::string::npos);
  EXPECT_EQ(r->cases[3].Line(), "FAIL util: expected utilization 40 got 50");
  EXPECT_NE(r->cases[4].detail.find("unsupported step"), std::string::npos);
  EXPECT_NE(r->cases[5].detail.find("stabilizationWindowSeconds"), std::string::npos);
  EXPECT_NE(r->cases[6].detail.find("no pods"), std::string::npos);
  EXPECT_EQ(r->Summary(), "1 passed, 6 failed");
}

TEST(ConformanceHpa, CaseSettingsOverrideFileDefaults) {
  // Ratio 1.4: inside a 0.5 tolerance from the defaults, outside the case's own 0.1.
  const std::string c = R"({"name": "%s", "currentReplicas": 1 %s,
    "metric": {"type": "Pods", "target": {"type": "AverageValue", "value": 1000}},
    "pods": [{"value": 1400}], "expectedReplicas": %d})";
  char a[512], b[512];
  std::snprintf(a, sizeof a, c.c_str(), "defaults", "", 1);
  std::snprintf(b, sizeof b, c.c_str(), "own", R"(, "tolerance": 0.1)", 2);
  auto r = EvaluateHpaVectors(
      std::string(R"({"defaults": {"tolerance": 0.5}, "cases": [)") + a + "," + b + "]}", "f.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->failed, 0) << r->cases[0].Line() << " / " << r->cases[1].Line();
}

// The command itself: lines, closing summary and exit codes.
struct CmdResult {
  int code;
  std::string out;
};
CmdResult RunCommand(const std::string& args) {
  const std::string cmd = std::string(AISCALE_BINARY) + " conformance hpa " + args + " 2>&1";
  CmdResult r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) r.out += buf;
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(ConformanceHpa, CommandPrintsLinesSummaryAndExitCode) {
  const auto files = VectorFiles(fs::path(SharedDir()) / "conformance");
  ASSERT_FALSE(files.empty());
  const CmdResult ok = RunCommand(files[0].string());
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("PASS "), std::string::npos);
  EXPECT_NE(ok.out.find(" passed, 0 failed\n"), std::string::npos) << ok.out;

  const fs::path dir = fs::temp_directory_path() / ("aiscale_hpa_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "fail.json") << File(std::string(kGood) + R"(, {"name": "w",
    "currentReplicas": 2, "metric": {"type": "Pods", "target": {"type": "AverageValue",
    "value": 1000}}, "pods": [{"value": 2000}], "expectedReplicas": 9})");
  std::ofstream(dir / "bad.json") << "{";
  const CmdResult fail = RunCommand((dir / "fail.json").string());
  EXPECT_EQ(fail.code, 1) << fail.out;
  EXPECT_NE(fail.out.find("FAIL w: expected 9 got 2"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("1 passed, 1 failed\n"), std::string::npos) << fail.out;
  const CmdResult bad = RunCommand((dir / "bad.json").string());
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("bad.json"), std::string::npos) << bad.out;
  const CmdResult missing = RunCommand((dir / "nope.json").string());
  EXPECT_EQ(missing.code, 2) << missing.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aiscale::cli
