// `aiscale calibrate` as a user runs it, on a recording of one real run of examples/elastic
// (examples/elastic/throughput.sh, the aiscale leg: 2 epochs of 6,400 samples, grown 1 -> 2):
// tests/cli/testdata/calibrate/ holds its events log, its controller config and its decisions
// as the store's JSON rows, written into a fresh SQLite store here.
#include <sys/stat.h>

#include <filesystem>
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

// The recorded decisions as a JSON-lines log for workload `key`, their wall times moved by
// `shift_s`.
std::string DecisionLog(const std::string& dir, const std::string& key, double shift_s = 0) {
  const std::string path = dir + "/decisions-" + std::to_string(static_cast<long>(shift_s)) + "-" +
                           std::to_string(std::hash<std::string>{}(key)) + ".jsonl";
  std::ifstream in(kData + "/decisions.jsonl");
  std::ofstream out(path);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line);
    j["workload"] = key;
    j["wall_s"] = j["wall_s"].get<double>() + shift_s;
    j["t_s"] = j["t_s"].get<double>() + shift_s;
    out << j.dump() << "\n";
  }
  return path;
}

// Every example controller config with a training job, block style and flow style alike
// (issue 27: the README's block-style example wrote invalid YAML), calibrated from the
// recorded run: the scenario it writes validates and keeps the config's policy.
TEST(Calibrate, EveryExampleConfigRoundTrips) {
  const std::string dir = aiscale::testing::FreshTempDir("calibrate-examples");
  std::vector<std::string> configs = {kData + "/aiscale.yaml"};  // flow style
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           std::string(AISCALE_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".yaml") continue;
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    if (text.find("kind: ControllerConfig") != std::string::npos &&
        text.find("kind: TrainingJob") != std::string::npos) {
      configs.push_back(e.path().string());
    }
  }
  ASSERT_GE(configs.size(), 4u);  // the flow one and examples/elastic's three (block style)
  for (const std::string& cfg : configs) {
    SCOPED_TRACE(cfg);
    const std::string key =
        cfg.find("kubernetes") != std::string::npos ? "training/elastic" : "elastic";
    const std::string out = dir + "/" + std::filesystem::path(cfg).stem().string() + ".out.yaml";
    const RunResult r = RunAiscale("calibrate --config " + cfg + " --events " + kData +
                                   "/events.jsonl --decisions " + DecisionLog(dir, key) +
                                   " --no-simulate -o " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    const RunResult v = RunAiscale("validate " + out);
    EXPECT_EQ(v.code, 0) << v.out;
    std::ifstream in(out);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(text.find("name: training"), std::string::npos) << text;
    EXPECT_NE(text.find("rescales_per_hour: 60"), std::string::npos) << text;
  }
}

// Calibrate reads the run it is pointed at, or says why not (issue 27 §4).
TEST(Calibrate, RefusesWhatIsNotThisRunsRecord) {
  const std::string dir = aiscale::testing::FreshTempDir("calibrate-refuse");
  const std::string cfg = " --config " + kData + "/aiscale.yaml --events " + kData +
                          "/events.jsonl --no-simulate -o " + dir + "/out.yaml";
  {
    auto empty = store::SqliteStore::Open(dir + "/empty.db");
    ASSERT_TRUE(empty.ok());
  }
  {
    std::ofstream bad(dir + "/bad.jsonl");
    std::ifstream in(kData + "/decisions.jsonl");
    std::string first;
    std::getline(in, first);
    bad << first << "\n{\"workload\": \"elastic\", \"oops\": 1}\n";
  }
  struct Case {
    std::string name;
    std::string args;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"a store that does not exist", "--store " + dir + "/none.db",
       "store " + dir + "/none.db does not exist"},
      {"an empty store", "--store " + dir + "/empty.db", "holds no decision of workload elastic"},
      {"another run's decisions (a day later)", "--decisions " + DecisionLog(dir, "elastic", 86400),
       "none during the run in the events log"},
      {"another workload's decisions", "--decisions " + DecisionLog(dir, "other"),
       "holds no decision of workload elastic"},
      {"a line that is not a decision", "--decisions " + dir + "/bad.jsonl", "bad.jsonl:2:"},
      {"a run the log does not hold", "--store " + RecordedStore(dir) + " --run nope",
       "no run 'nope'"},
      {"both sources", "--store a.db --decisions b.jsonl", "give one"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const RunResult r = RunAiscale("calibrate" + cfg + " " + c.args);
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(c.want), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out.yaml")) << "wrote a scenario anyway";
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/none.db")) << "created the missing store";
}

TEST(Calibrate, TheDecisionLogServesAsTheStore) {
  // The recorded decisions.jsonl as given, and the same decisions in a store: one result.
  const std::string dir = aiscale::testing::FreshTempDir("calibrate-jsonl");
  const std::string cfg = "calibrate --config " + kData + "/aiscale.yaml --events " + kData +
                          "/events.jsonl --no-simulate";
  const RunResult a =
      RunAiscale(cfg + " --decisions " + kData + "/decisions.jsonl -o " + dir + "/a.yaml");
  const RunResult b = RunAiscale(cfg + " --store " + RecordedStore(dir) + " -o " + dir + "/b.yaml");
  ASSERT_EQ(a.code, 0) << a.out;
  ASSERT_EQ(b.code, 0) << b.out;
  std::ifstream ia(dir + "/a.yaml"), ib(dir + "/b.yaml");
  const std::string ta((std::istreambuf_iterator<char>(ia)), {});
  const std::string tb((std::istreambuf_iterator<char>(ib)), {});
  EXPECT_EQ(ta, tb);
  EXPECT_NE(a.out.find("calibrated from 52 decisions"), std::string::npos) << a.out;
}

}  // namespace
}  // namespace aiscale::cli
