// Conformance vector files that used to be evaluated as if valid (issue 11): duplicate keys,
// self-contradictory vectors (min > max, negative replicas, times in the future), hostile
// nesting and special files are errors naming the file and the vector, never a PASS or FAIL.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/conformance_hpa_eval.h"
#include "cli/conformance_kpa_eval.h"

namespace aiscale::cli {
namespace {

const std::string kBehavior =
    R"({"name": "b", "step": "behavior", "currentReplicas": 2, "recommendation": 3,
        "minReplicas": 1, "maxReplicas": 5, "expectedReplicas": 3})";
const std::string kReplicas = R"({"name": "r", "currentReplicas": 2,
  "metric": {"type": "Pods", "target": {"type": "AverageValue", "value": 1000}},
  "pods": [{"value": 2000}, {"value": 2000}], "expectedReplicas": 4})";

std::string Hpa(const std::string& c) { return R"({"kind": "hpa", "cases": [)" + c + "]}"; }
std::string Swap(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

TEST(ConformanceInvalid, HpaVectors) {
  struct Case {
    std::string name, text;
    std::vector<std::string> want;  // substrings of the error; empty: valid
  };
  const std::vector<Case> cases = {
      {"valid behavior", Hpa(kBehavior), {}},
      {"valid replicas", Hpa(kReplicas), {}},
      {"min > max",
       Hpa(Swap(kBehavior, "\"minReplicas\": 1", "\"minReplicas\": 7")),
       {"f.json: case 0 (b)", "minReplicas 7 > maxReplicas 5"}},
      {"negative current",
       Hpa(Swap(kBehavior, "\"currentReplicas\": 2", "\"currentReplicas\": -2")),
       {"case 0 (b)", "currentReplicas: must be >= 0, got -2"}},
      {"negative max",
       Hpa(Swap(kBehavior, "\"maxReplicas\": 5", "\"maxReplicas\": -5")),
       {"case 0 (b)", "maxReplicas: must be >= 0"}},
      {"negative expected",
       Hpa(Swap(kReplicas, "\"expectedReplicas\": 4", "\"expectedReplicas\": -4")),
       {"case 0 (r)", "expectedReplicas: must be >= 0"}},
      {"negative recommendation",
       Hpa(Swap(kBehavior, "\"recommendation\": 3", "\"recommendation\": -1")),
       {"case 0 (b)", "recommendation: must be >= 0"}},
      {"history in the future",
       Hpa(Swap(kBehavior, "\"expectedReplicas\": 3",
                "\"expectedReplicas\": 3, \"history\": [{\"secondsAgo\": -5, \"replicas\": 1}]")),
       {"case 0 (b)", "history[0].secondsAgo: must be >= 0"}},
      {"negative history replicas",
       Hpa(Swap(kBehavior, "\"expectedReplicas\": 3",
                "\"expectedReplicas\": 3, \"history\": [{\"secondsAgo\": 5, \"replicas\": -1}]")),
       {"case 0 (b)", "history[0].replicas: must be >= 0"}},
      {"duplicate key",
       Hpa(Swap(kBehavior, "\"minReplicas\": 1", "\"minReplicas\": 1, \"minReplicas\": 9")),
       {"f.json: ", "duplicate key 'minReplicas' in the object at cases[0]"}},
      {"zero target",
       Hpa(Swap(kReplicas, "\"value\": 1000}", "\"value\": 0}")),
       {"case 0 (r)", "metric.target.value: must be > 0"}},
      {"negative resource usage",
       Hpa(R"({"name": "u", "currentReplicas": 1, "resource": "cpu",
    "metric": {"type": "Resource", "target": {"type": "Utilization", "value": 50}},
    "pods": [{"value": -500, "request": 1000}], "expectedReplicas": 1})"),
       {"case 0 (u)", "pods[0].value: resource usage must be >= 0"}},
      {"deep nesting", std::string(100000, '['), {"f.json: ", "nested deeper than 64 levels"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = EvaluateHpaVectors(c.text, "f.json");
    if (c.want.empty()) {
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(r->failed, 0) << r->cases[0].Line();
      continue;
    }
    ASSERT_FALSE(r.ok());
    for (const auto& w : c.want) {
      EXPECT_NE(r.status().message().find(w), std::string::npos) << r.status().message();
    }
  }
}

const std::string kKpa = R"({"kind": "kpa", "cases": [{
  "name": "c1", "config": {"targetConcurrency": 10, "targetUtilization": 1.0},
  "readyPods": 2, "samples": [{"secondsAgo": 1, "concurrency": 40}],
  "maxPanicPods": 0, "expectedPods": 4, "expectedPanic": false}]})";

TEST(ConformanceInvalid, KpaVectors) {
  struct Case {
    std::string name, from, to, want;
  };
  const std::vector<Case> cases = {
      {"negative ready", "\"readyPods\": 2", "\"readyPods\": -2",
       "cases[0] (c1).readyPods: must be >= 0, got -2"},
      {"negative expected", "\"expectedPods\": 4", "\"expectedPods\": -4",
       "cases[0] (c1).expectedPods: must be >= 0"},
      {"negative max panic", "\"maxPanicPods\": 0", "\"maxPanicPods\": -1",
       "cases[0] (c1).maxPanicPods: must be >= 0"},
      {"negative current", "\"expectedPods\": 4", "\"expectedPods\": 4, \"currentPods\": -3",
       "cases[0] (c1).currentPods: must be >= 0"},
      {"duplicate key", "\"readyPods\": 2", "\"readyPods\": 2, \"readyPods\": 3",
       "duplicate key 'readyPods' in the object at cases[0]"},
  };
  ASSERT_TRUE(EvaluateKpaVectors(kKpa, "k.json").ok());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = EvaluateKpaVectors(Swap(kKpa, c.from, c.to), "k.json");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("k.json"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

TEST(ConformanceInvalid, SpecialFilesAreRefused) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("aiscale_conf_files_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), dir.string()}) {
    SCOPED_TRACE(path);
    for (const Status& s :
         {EvaluateHpaVectorsFile(path).status(), EvaluateKpaVectorFile(path).status()}) {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.message().find("unable to read conformance file " + path), std::string::npos)
          << s.message();
      EXPECT_NE(s.message().find("only regular files are read"), std::string::npos);
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace aiscale::cli
