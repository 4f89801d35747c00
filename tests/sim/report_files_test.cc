// Report files: atomic writes, one run per output folder at a time (flock), and a rerun that
// removes what an earlier run left; decision-log names that would collide are refused before
// anything is written.
#include "sim/report_files.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report.h"

namespace aiscale::sim {
namespace {

namespace fs = std::filesystem;

std::set<std::string> Names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunResult Run(const std::string& label) {
  RunResult r;
  r.policy = label;
  WorkloadRun w;
  w.name = "job";
  w.summary.gpu_hours = 1.0;
  w.summary.completion_time_s = 10.0;
  r.workloads.push_back(w);
  r.decisions.push_back(Decision{});
  r.decisions_total = 1;
  return r;
}

ScenarioResult MakeResult(const std::vector<std::string>& labels) {
  ScenarioResult sr;
  sr.scenario = "t";
  for (const auto& l : labels) sr.runs.push_back(Run(l));
  return sr;
}

class ReportFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("aiscale_report_files_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReportFilesTest, DecisionLogNamesMustNotCollide) {
  struct Case {
    std::string name;
    std::vector<std::string> labels;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"distinct", {"hpa", "hpa-2", "kpa"}, ""},
      {"slash and underscore",
       {"a/b", "a_b"},
       "labels 'a/b' and 'a_b' would both write "
       "decisions-a_b.jsonl"},
      {"two odd characters", {"x y", "x.y"}, "labels 'x y' and 'x.y'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Status s = CheckDecisionLogNames(c.labels);
    const auto w = WriteReport(MakeResult(c.labels), dir_.string());
    if (c.error.empty()) {
      EXPECT_TRUE(s.ok()) << s.message();
      EXPECT_TRUE(w.ok()) << w.status().message();
    } else {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.message().find(c.error), std::string::npos) << s.message();
      ASSERT_FALSE(w.ok());
      EXPECT_EQ(w.status().message(), s.message());
    }
    fs::remove_all(dir_);
  }
  EXPECT_EQ(DecisionLogFileName("hpa queue/2"), "decisions-hpa_queue_2.jsonl");
}

TEST_F(ReportFilesTest, AtomicWriteReplacesWholeAndLeavesNoTemporary) {
  fs::create_directories(dir_);
  const std::string p = (dir_ / "report.json").string();
  ASSERT_TRUE(WriteFileAtomic(p, "old").ok());
  ASSERT_TRUE(WriteFileAtomic(p, "new and longer").ok());
  EXPECT_EQ(Slurp(p), "new and longer");
  EXPECT_EQ(Names(dir_), std::set<std::string>{"report.json"});
  const Status bad = WriteFileAtomic((dir_ / "no-such-dir" / "x").string(), "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("unable to write"), std::string::npos);
}

TEST_F(ReportFilesTest, OneRunPerFolder) {
  auto first = OutputLock::Acquire(dir_.string());
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = OutputLock::Acquire(dir_.string());
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(second.status().IsConflict());
  EXPECT_NE(second.status().message().find("in use by another aiscale run (pid " +
                                           std::to_string(::getpid()) + ")"),
            std::string::npos)
      << second.status().message();
  // WriteReport without the held lock is refused too; with it, it writes.
  EXPECT_FALSE(WriteReport(MakeResult({"static"}), dir_.string()).ok());
  EXPECT_TRUE(WriteReport(MakeResult({"static"}), dir_.string(), &*first).ok());
  { OutputLock released = std::move(*first); }
  EXPECT_TRUE(OutputLock::Acquire(dir_.string()).ok());
}

TEST_F(ReportFilesTest, RerunRemovesWhatTheLastRunLeft) {
  ASSERT_TRUE(WriteReport(MakeResult({"static", "hpa", "kpa"}), dir_.string()).ok());
  // Left by a killed run or an older version: a temporary and an unlisted decision log.
  std::ofstream(dir_ / ".aiscale-tmp-report.json.123") << "{\"trunc";
  std::ofstream(dir_ / "decisions-old.jsonl") << "{}\n";
  // Not ours: kept whatever the manifest says.
  std::ofstream(dir_ / "notes.txt") << "mine";
  std::ofstream(dir_ / kManifestFileName, std::ios::app) << "notes.txt\n../escape\n";
  ASSERT_TRUE(WriteReport(MakeResult({"static"}), dir_.string()).ok());
  EXPECT_EQ(Names(dir_),
            (std::set<std::string>{kLockFileName, kManifestFileName, "notes.txt", "report.json",
                                   "report.html", "decisions-static.jsonl"}));
  EXPECT_EQ(Slurp(dir_ / kManifestFileName), "report.json\nreport.html\ndecisions-static.jsonl\n");
}

}  // namespace
}  // namespace aiscale::sim
