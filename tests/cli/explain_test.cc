// `aiscale explain` as a user runs it: the built binary against a SQLite store written here
// (through a controller config) and against a live ApiServer on 127.0.0.1.
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

#include "server/api_server.h"
#include "server/fake_live_view.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace aiscale::cli {
namespace {

using aiscale::testing::ApiDecision;
using aiscale::testing::ApiWorkload;

RunResult RunExplain(const std::string& args) { return RunAiscale("explain " + args); }

bool Has(const std::string& text, const std::string& words) {
  return text.find(words) != std::string::npos;
}

std::string WriteConfig(const std::string& dir, const std::string& store_line) {
  const std::string path = dir + "/controller.yaml";
  std::ofstream(path) << "apiVersion: aiscale.dev/v1alpha1\n"
                         "kind: ControllerConfig\n"
                         "spec:\n"
                         "  period: 15s\n"
                      << store_line
                      << "  workloads:\n"
                         "    - name: llm\n"
                         "      kind: InferenceService\n"
                         "      namespace: serving\n"
                         "      min_replicas: 1\n"
                         "      max_replicas: 8\n"
                         "      policy:\n"
                         "        name: static\n"
                         "        replicas: 2\n";
  return path;
}

// Three decisions of serving/llm, the last one held back by stabilization and a failed apply.
std::vector<Decision> History() {
  std::vector<Decision> h = {ApiDecision("serving/llm", 60, 0), ApiDecision("serving/llm", 75, 1),
                             ApiDecision("serving/llm", 90, 2)};
  h[2].stabilized = 5;
  h[2].stabilize_reason = "scale-up limited to 4 pods per 60 s";
  h[2].constrained = 5;
  h[2].action = Action::kFailed;
  h[2].action_detail = "PATCH scale: 409 Conflict";
  return h;
}

TEST(Explain, FromTheStoreOfAConfig) {
  const std::string dir = aiscale::testing::FreshTempDir("explain");
  const std::string db = dir + "/store.db";
  {
    auto store = store::SqliteStore::Open(db);
    ASSERT_TRUE(store.ok()) << store.status().message();
    for (const Decision& d : History()) ASSERT_TRUE((*store)->Append(d).ok());
  }
  const std::string config = WriteConfig(dir, "  store: " + db + "\n");
  for (const std::string name : {"llm", "serving/llm"}) {
    SCOPED_TRACE(name);
    const RunResult r = RunExplain(name + " --config " + config + " --limit 2");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(Has(r.out, "Last 2 decisions of serving/llm, newest first")) << r.out;
    // Newest (t=90, shown by its wall time) first, then t=75; t=60 is past the limit.
    const size_t newest = r.out.find("2026-09-21T14:14:50.000Z  serving/llm");
    const size_t older = r.out.find("2026-09-21T14:14:35.000Z  serving/llm");
    ASSERT_NE(newest, std::string::npos) << r.out;
    ASSERT_NE(older, std::string::npos) << r.out;
    EXPECT_LT(newest, older);
    EXPECT_FALSE(Has(r.out, "2026-09-21T14:14:20.000Z"));
    EXPECT_FALSE(Has(r.out, "t=90s")) << "a stamped decision shows its wall time only";
    EXPECT_TRUE(Has(r.out,
                    "recommended: 6 by rule hpa_ratio: concurrency 32 per replica over "
                    "target 24"))
        << r.out;
    EXPECT_TRUE(Has(r.out, "facts:       ratio=1.25 target=24")) << r.out;
    EXPECT_TRUE(Has(r.out, "concurrency = 32 (mean of 3, sum 96)")) << r.out;
    EXPECT_TRUE(Has(r.out, "kv_cache_usage stale (not data): all 3 values older than 45 s"));
    EXPECT_TRUE(Has(r.out, "stabilized:  5 (scale-up limited to 4 pods per 60 s)")) << r.out;
    EXPECT_TRUE(Has(r.out, "tried to scale from 3 to 5 and failed (PATCH scale: 409 Conflict)"));
    EXPECT_TRUE(Has(r.out, "done:        scaled from 3 to 5 (3 -> 5)")) << r.out;
  }
}

TEST(Explain, StoreErrorsExit1) {
  const std::string dir = aiscale::testing::FreshTempDir("explain_err");
  const std::string db = dir + "/store.db";
  {
    auto store = store::SqliteStore::Open(db);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Append(ApiDecision("serving/llm", 60, 0)).ok());
  }
  struct Case {
    const char* name;
    std::string store_line;
    std::string workload;
    std::string words;
  };
  const std::vector<Case> cases = {
      {"no store configured", "", "llm", "no store configured"},
      {"store file missing", "  store: " + dir + "/missing.db\n", "llm", "does not exist"},
      {"unknown workload", "  store: " + db + "\n", "nope", "unknown workload 'nope'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const RunResult r = RunExplain(c.workload + " --config " + WriteConfig(dir, c.store_line));
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_TRUE(Has(r.out, c.words)) << r.out;
  }
  const RunResult bad = RunExplain("llm --config " + dir + "/no-such.yaml");
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_TRUE(Has(bad.out, "unable to read controller config")) << bad.out;
}

TEST(Explain, FromALiveServer) {
  aiscale::testing::FakeLiveView view;
  view.Set({ApiWorkload("serving", "llm", 3)});
  view.SetReady(true);
  store::MemoryStore store;
  for (const Decision& d : History()) ASSERT_TRUE(store.Append(d).ok());
  Telemetry telemetry;
  server::ApiServer api({"127.0.0.1", 0}, view, &store, telemetry);
  ASSERT_TRUE(api.Start().ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(api.port());

  const RunResult r = RunExplain("serving/llm --url " + url + "/");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "Last 3 decisions of serving/llm")) << r.out;
  EXPECT_LT(r.out.find("2026-09-21T14:14:50.000Z"), r.out.find("2026-09-21T14:14:20.000Z"));
  EXPECT_TRUE(Has(r.out, "by rule hpa_ratio: concurrency 30 per replica over target 24"));

  const RunResult unknown = RunExplain("nope --url " + url);
  EXPECT_EQ(unknown.code, 1) << unknown.out;
  EXPECT_TRUE(Has(unknown.out, "404: unknown workload 'nope'")) << unknown.out;

  api.Stop();
  const RunResult down = RunExplain("llm --url " + url);
  EXPECT_EQ(down.code, 1) << down.out;
  EXPECT_TRUE(Has(down.out, "unable to reach aiscale server at " + url)) << down.out;
}

TEST(Explain, UsageErrorsExit2) {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"nothing", ""},
      {"no source", "llm"},
      {"both sources", "llm --config a.yaml --url http://127.0.0.1:1"},
      {"no name", "--url http://127.0.0.1:1"},
      {"two names", "llm bert --url http://127.0.0.1:1"},
      {"limit zero", "llm --url http://127.0.0.1:1 --limit 0"},
      {"limit words", "llm --url http://127.0.0.1:1 --limit many"},
      {"limit missing", "llm --url http://127.0.0.1:1 --limit"},
      {"unknown flag", "llm --url http://127.0.0.1:1 --json"},
  };
  for (const auto& [name, args] : cases) {
    SCOPED_TRACE(name);
    const RunResult r = RunExplain(args);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_TRUE(Has(r.out, "usage: aiscale explain")) << r.out;
  }
  EXPECT_EQ(RunExplain("--help").code, 0);
}

}  // namespace
}  // namespace aiscale::cli
