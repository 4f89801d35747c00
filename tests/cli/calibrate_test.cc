// `aiscale calibrate` as a user runs it, on a recording of one real run of examples/elastic
// (examples/elastic/throughput.sh, the aiscale leg: 2 epochs of 6,400 samples, grown 1 -> 2):
// tests/cli/testdata/calibrate/ holds its events log, its controller config and its decisions
// as the store's JSON rows, written into a fresh SQLite store here.
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

#include "core/decision_codec.h"
#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace aiscale::cli {
namespace {

const std::string kData = std::string(AISCALE_SOURCE_DIR) + "/tests/cli/testdata/calibrate";

// The recorded decisions in a new store; returns its path.
std::string RecordedStore(const std::string& dir) {
  const std::string path = dir + "/store.db";
  auto store = store::SqliteStore::Open(path);
  EXPECT_TRUE(store.ok());
  std::ifstream in(kData + "/decisions.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    auto d = DecisionFromJson(nlohmann::json::parse(line));
    EXPECT_TRUE(d.ok()) << d.status().message();
    if (d.ok()) {
      EXPECT_TRUE((*store)->Append(*d).ok());
    }
    ++n;
  }
  EXPECT_GT(n, 10);
  return path;
}

// The error of one row of the predicted-vs-real table, in percent.
double RowError(const std::string& out, const std::string& what) {
  std::smatch m;
  const std::regex re("  " + what + R"( +[-0-9.]+ +[-0-9.]+ +([-+0-9.]+)%)");
  if (!std::regex_search(out, m, re)) return 1e9;
  return std::stod(m[1]);
}

TEST(Calibrate, RecordedRunPredictedWithinFifteenPercent) {
  const std::string dir = aiscale::testing::FreshTempDir("calibrate");
  const std::string store = RecordedStore(dir);
  const std::string scenario = dir + "/scenario.yaml";
  const RunResult r = RunAiscale("calibrate --config " + kData + "/aiscale.yaml --events " + kData +
                                 "/events.jsonl --store " + store + " -o " + scenario);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + scenario), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("samples/s by world size:  1: measured"), std::string::npos) << r.out;
  // The recorded run: one grow (1 -> 2) and the issue's fidelity target on its job time.
  EXPECT_NE(r.out.find("grow [3"), std::string::npos) << r.out;
  EXPECT_LT(std::abs(RowError(r.out, "job time \\(s\\)")), 15) << r.out;
  EXPECT_LT(std::abs(RowError(r.out, "node-hours")), 15) << r.out;
  EXPECT_EQ(RowError(r.out, "rescales"), 0) << r.out;
  // What it wrote is a scenario aiscale accepts and runs.
  const RunResult v = RunAiscale("validate " + scenario);
  EXPECT_EQ(v.code, 0) << v.out;
}

TEST(Calibrate, BadInputIsAClearError) {
  const std::string dir = aiscale::testing::FreshTempDir("calibrate-bad");
  const std::string store = RecordedStore(dir);
  // The first 60 lines: the job had not finished.
  {
    std::ifstream in(kData + "/events.jsonl");
    std::ofstream out(dir + "/cut.jsonl");
    std::string line;
    for (int i = 0; i < 60 && std::getline(in, line); ++i) out << line << "\n";
  }
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);  // no writer: open() would block
  const std::string cfg = " --config " + kData + "/aiscale.yaml";
  struct Case {
    std::string name;
    std::string args;
    int code;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"no events flag", "calibrate" + cfg, 2, "needs --config and --events"},
      {"events file missing", "calibrate" + cfg + " --events " + dir + "/none.jsonl", 1,
       "unable to read events log " + dir + "/none.jsonl"},
      {"unfinished run", "calibrate" + cfg + " --events " + dir + "/cut.jsonl --store " + store, 1,
       "calibrate needs a run that finished"},
      {"unknown workload",
       "calibrate" + cfg + " --events " + kData + "/events.jsonl --workload nope", 1,
       "no workload 'nope'"},
      {"unknown flag", "calibrate --frobnicate", 2, "unexpected '--frobnicate'"},
      // Special files are refused before they are opened (issue 11): no hang, no endless read.
      {"events from /dev/zero", "calibrate" + cfg + " --events /dev/zero", 1,
       "unable to read events log /dev/zero"},
      {"events from a directory", "calibrate" + cfg + " --events " + dir, 1,
       "unable to read events log " + dir},
      {"events from a FIFO", "calibrate" + cfg + " --events " + dir + "/fifo", 1,
       "unable to read events log " + dir + "/fifo"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const RunResult r = RunAiscale(c.args);
    EXPECT_EQ(r.code, c.code) << r.out;
    EXPECT_NE(r.out.find(c.want), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace aiscale::cli
