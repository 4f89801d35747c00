#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/conformance_kpa_eval.h"
#include "fakes/vector_files.h"

namespace aiscale::cli {
namespace {

namespace fs = std::filesystem;

using ::aiscale::testing::SharedDir;

std::vector<fs::path> VectorFiles(const fs::path& dir) {
  return ::aiscale::testing::VectorFiles(dir, "kpa_");
}

void ExpectAllPass(const std::vector<fs::path>& files) {
  ASSERT_FALSE(files.empty());
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    Result<KpaConformanceReport> r = EvaluateKpaVectorFile(f.string());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_GT(r->passed, 0);
    EXPECT_EQ(r->failed, 0) << r->Summary();
    for (const KpaCaseOutcome& c : r->cases) EXPECT_TRUE(c.passed) << c.line;
  }
}

TEST(ConformanceKpa, EverySharedVectorFilePasses) {
  const std::vector<fs::path> files = VectorFiles(fs::path(SharedDir()) / "conformance");
  ExpectAllPass(files);
  // The Knative file carries 33 cases; losing some would hide regressions.
  for (const fs::path& f : files) {
    if (f.filename() != "kpa_knative.json") continue;
    Result<KpaConformanceReport> r = EvaluateKpaVectorFile(f.string());
    ASSERT_TRUE(r.ok());
    EXPECT_GE(r->passed, 33);
  }
}

TEST(ConformanceKpa, ProjectExtraVectorsPass) {
  ExpectAllPass(VectorFiles(fs::path(AISCALE_SOURCE_DIR) / "tests" / "conformance"));
}

const char* kOneCase = R"({"kind": "kpa", "cases": [{
  "name": "c1", "config": {"targetConcurrency": 10, "targetUtilization": 1.0},
  "readyPods": 2, "samples": [{"secondsAgo": 1, "concurrency": 40}, {"secondsAgo": 0, "concurrency": 40}],
  "panicSinceSecondsAgo": null, "maxPanicPods": 0, "expectedPods": EXPECTED, "expectedPanic": false}]})";

std::string WithExpected(const std::string& v) {
  std::string s = kOneCase;
  s.replace(s.find("EXPECTED"), 8, v);
  return s;
}

TEST(ConformanceKpa, PassAndFailLines) {
  // 40 / 10 = 4 pods; 4 / 2 ready = 200% -> panic, so `expectedPanic: false` fails too.
  Result<KpaConformanceReport> r = EvaluateKpaVectors(WithExpected("4"), "t.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cases.size(), 1u);
  EXPECT_EQ(r->cases[0].line, "FAIL c1: expected 4 (panic false) got 4 (panic true)");
  EXPECT_EQ(r->Summary(), "0 passed, 1 failed");

  std::string pass = WithExpected("4");
  pass.replace(pass.find("\"expectedPanic\": false"), 22, "\"expectedPanic\": true");
  r = EvaluateKpaVectors(pass, "t.json");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cases[0].line, "PASS c1");
  EXPECT_EQ(r->Summary(), "1 passed, 0 failed");
}

TEST(ConformanceKpa, UnrepresentableCaseFails) {
  struct Case {
    std::string name;
    std::string from, to;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"zero target", "\"targetConcurrency\": 10", "\"targetConcurrency\": 0", "target"},
      {"future sample", "\"secondsAgo\": 1", "\"secondsAgo\": -3", "future"},
      {"fractional window", "\"targetUtilization\": 1.0",
       "\"targetUtilization\": 1.0, \"stableWindowSeconds\": 6.5", "stableWindowSeconds"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string text = WithExpected("4");
    text.replace(text.find(c.from), c.from.size(), c.to);
    Result<KpaConformanceReport> r = EvaluateKpaVectors(text, "t.json");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->failed, 1);
    EXPECT_NE(r->cases[0].line.find("cannot represent"), std::string::npos) << r->cases[0].line;
    EXPECT_NE(r->cases[0].line.find(c.want), std::string::npos) << r->cases[0].line;
  }
}

TEST(ConformanceKpa, MalformedFileNamesFileCaseAndField) {
  struct Case {
    std::string name;
    std::string text;
    std::vector<std::string> want;
  };
  const std::string ok = WithExpected("4");
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = ok;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::vector<Case> cases = {
      {"not json", "{\"kind\": ", {"bad.json", "not valid JSON"}},
      {"wrong kind", edit("\"kind\": \"kpa\"", "\"kind\": \"hpa\""), {"bad.json", "kind"}},
      {"no cases", "{\"kind\": \"kpa\"}", {"bad.json", "cases"}},
      {"missing expectedPods",
       edit("\"expectedPods\": 4,", ""),
       {"bad.json", "cases[0] (c1)", "expectedPods"}},
      {"mistyped readyPods",
       edit("\"readyPods\": 2", "\"readyPods\": \"two\""),
       {"bad.json", "cases[0] (c1).readyPods", "expected a number"}},
      {"fractional readyPods",
       edit("\"readyPods\": 2", "\"readyPods\": 2.5"),
       {"cases[0] (c1).readyPods", "integer"}},
      {"sample without value",
       edit("\"secondsAgo\": 0, \"concurrency\": 40", "\"secondsAgo\": 0"),
       {"cases[0] (c1).samples[1]", "concurrency"}},
      {"missing target",
       edit("\"targetConcurrency\": 10, ", ""),
       {"cases[0] (c1).config", "targetConcurrency"}},
      {"expectedPanic not bool",
       edit("\"expectedPanic\": false", "\"expectedPanic\": 0"),
       {"expectedPanic"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<KpaConformanceReport> r = EvaluateKpaVectors(c.text, "bad.json");
    ASSERT_FALSE(r.ok());
    for (const std::string& w : c.want) {
      EXPECT_NE(r.status().message().find(w), std::string::npos) << r.status().message();
    }
  }
}

TEST(ConformanceKpa, UnreadableFileIsAnError) {
  Result<KpaConformanceReport> r = EvaluateKpaVectorFile("/nonexistent/kpa_x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/kpa_x.json"), std::string::npos);
}

}  // namespace
}  // namespace aiscale::cli
