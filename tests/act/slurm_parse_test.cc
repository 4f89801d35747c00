// The squeue/sinfo parsers against output captured from a real Slurm 22.05.8 cluster
// (slurmctld + 3 slurmd on one host; tests/integration/lib/slurm.sh starts the same).
#include "act/slurm_parse.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace aiscale::act {
namespace {

std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(AISCALE_SOURCE_DIR) + "/tests/act/testdata/slurm/" + name);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_TRUE(in.good() || in.eof()) << name;
  return s.str();
}

std::string Summary(const std::vector<SlurmJob>& jobs) {
  std::string out;
  for (const SlurmJob& j : jobs) {
    out += j.id + " " + j.name + " " + j.state + " [" + j.nodes + "] [" + j.comment + "]\n";
  }
  return out;
}

TEST(SlurmParse, SqueueJsonAndTextFromSlurm2205) {
  struct Case {
    const char* name;
    const char* file;
    bool json;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"json: running, pending, a foreign job, a cancelled one", "squeue_mixed.json", true,
       "1 aiscale-llm CANCELLED [node1] [aiscale:llm:0]\n"
       "5 aiscale-llm RUNNING [node1] [aiscale:llm:0]\n"
       "6 aiscale-llm RUNNING [node2] [aiscale:llm:1]\n"
       "7 other RUNNING [node3] []\n"
       "8 aiscale-llm PENDING [] [aiscale:llm:2]\n"},
      {"json: failed jobs stay listed", "squeue_failed.json", true,
       "1 aiscale-llm RUNNING [node1] [aiscale:llm:0]\n"
       "2 aiscale-llm FAILED [node2] [aiscale:llm:1]\n"
       "3 aiscale-llm FAILED [node3] [aiscale:llm:2]\n"
       "4 aiscale-llm PENDING [] [aiscale:llm:3]\n"},
      {"text: (null) comment and empty node list", "squeue_mixed.txt", false,
       "8 aiscale-llm PENDING [] [aiscale:llm:2]\n"
       "5 aiscale-llm RUNNING [node1] [aiscale:llm:0]\n"
       "6 aiscale-llm RUNNING [node2] [aiscale:llm:1]\n"
       "7 other RUNNING [node3] []\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string text = Testdata(c.file);
    Result<std::vector<SlurmJob>> jobs = c.json ? ParseSqueueJson(text) : ParseSqueueText(text);
    ASSERT_TRUE(jobs.ok()) << jobs.status().message();
    EXPECT_EQ(Summary(*jobs), c.want);
  }
}

TEST(SlurmParse, SqueueJsonReasonAndActiveStates) {
  Result<std::vector<SlurmJob>> jobs = ParseSqueueJson(Testdata("squeue_mixed.json"));
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 5u);
  EXPECT_EQ((*jobs)[4].reason, "Resources");
  const std::vector<bool> active = {false, true, true, true, true};
  const std::vector<bool> running = {false, true, true, true, false};
  for (size_t i = 0; i < jobs->size(); ++i) {
    SCOPED_TRACE((*jobs)[i].id);
    EXPECT_EQ(JobIsActive((*jobs)[i]), active[i]);
    EXPECT_EQ(JobIsRunning((*jobs)[i]), running[i]);
  }
}

// A job that ended stays the workload's until Slurm gives its final state: while COMPLETING
// it is not running and not gone (gone, a finished job was submitted again).
TEST(SlurmParse, ActiveUntilAFinalState) {
  const struct {
    const char* state;
    bool active, running;
  } cases[] = {
      {"PENDING", true, false},    {"RUNNING", true, true},     {"COMPLETING", true, false},
      {"COMPLETED", false, false}, {"FAILED", false, false},    {"CANCELLED", false, false},
      {"TIMEOUT", false, false},   {"NODE_FAIL", false, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.state);
    SlurmJob job;
    job.state = c.state;
    EXPECT_EQ(JobIsActive(job), c.active);
    EXPECT_EQ(JobIsRunning(job), c.running);
  }
}

TEST(SlurmParse, SqueueErrors) {
  struct Case {
    const char* name;
    std::string text;
    bool json;
    bool unavailable;  // else kInvalid
    std::string want;
  };
  const std::vector<Case> cases = {
      {"controller down: exit 0 with an errors entry", Testdata("squeue_controller_down.json"),
       true, true, "slurm_load_jobs: Failed while looking for jobs"},
      {"not json", "squeue: unrecognized option '--json'", true, false, "not a JSON object"},
      {"no jobs array", "{\"meta\": {}, \"errors\": []}", true, false, "no 'jobs' array"},
      {"job without id", "{\"errors\": [], \"jobs\": [{\"name\": \"x\"}]}", true, false,
       "has no job_id"},
      {"text line with too few fields", "42|RUNNING|node1\n", false, false, "unexpected line"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::vector<SlurmJob>> r = c.json ? ParseSqueueJson(c.text) : ParseSqueueText(c.text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().IsUnavailable(), c.unavailable) << r.status().message();
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

TEST(SlurmParse, SqueueTextKeepsBarsInTheComment) {
  Result<std::vector<SlurmJob>> jobs = ParseSqueueText("9|PENDING|(null)|n|a|b|c\r\n\n");
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].comment, "a|b|c");
  EXPECT_EQ((*jobs)[0].nodes, "");
}

TEST(SlurmParse, SinfoIdleNodes) {
  struct Case {
    const char* name;
    const char* file;
    bool json;
    std::string partition;
    int idle;
  };
  const std::vector<Case> cases = {
      {"json: one allocated, two idle", "sinfo_two_idle.json", true, "debug", 2},
      {"json: all partitions", "sinfo_two_idle.json", true, "", 2},
      {"json: another partition", "sinfo_two_idle.json", true, "gpu", 0},
      {"json: a draining node is not idle", "sinfo_drain.json", true, "debug", 0},
      {"json: idle but drained (state idle, flag DRAIN)", "sinfo_idle_drained.json", true, "debug",
       0},
      {"text: drained", "sinfo_idle_drained.txt", false, "debug", 0},
      {"text: one idle, default partition marked *", "sinfo_idle.txt", false, "debug", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string text = Testdata(c.file);
    Result<std::vector<SlurmNode>> nodes = c.json ? ParseSinfoJson(text) : ParseSinfoText(text);
    ASSERT_TRUE(nodes.ok()) << nodes.status().message();
    ASSERT_EQ(nodes->size(), 3u);
    EXPECT_EQ((*nodes)[0].name, "node1");
    EXPECT_EQ((*nodes)[0].address, "127.0.0.1");
    EXPECT_EQ(CountIdleNodes(*nodes, c.partition), c.idle);
  }
}

TEST(SlurmParse, SinfoTextStateSuffixes) {
  Result<std::vector<SlurmNode>> nodes = ParseSinfoText(
      "a|10.0.0.1|idle*|gpu\nb|10.0.0.2|idle~|gpu\nc|(null)|idle|gpu\n"
      "d|10.0.0.4|down|gpu\ne|10.0.0.5|mixed|gpu\n");
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(CountIdleNodes(*nodes, "gpu"), 1);  // only c
  EXPECT_EQ((*nodes)[2].address, "");
  EXPECT_FALSE((*nodes)[4].unavailable);
}

// sinfo --json's base state counts as the text format's does: a node "down" (or "future",
// "unknown") takes no job even with no state flag.
TEST(SlurmParse, SinfoJsonBaseStateDownIsUnavailable) {
  const std::string text = R"({"errors": [], "nodes": [
      {"name": "a", "address": "10.0.0.1", "state": "idle", "gres": "gpu:4", "partitions": ["gpu"]},
      {"name": "b", "address": "10.0.0.2", "state": "down", "gres": "gpu:4", "partitions": ["gpu"]},
      {"name": "c", "address": "10.0.0.3", "state": "mixed", "gres": "gpu:4", "partitions": ["gpu"]},
      {"name": "d", "address": "10.0.0.4", "state": "future", "gres": "gpu:4",
       "partitions": ["gpu"]}]})";
  Result<std::vector<SlurmNode>> nodes = ParseSinfoJson(text);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_FALSE((*nodes)[0].unavailable);
  EXPECT_TRUE((*nodes)[1].unavailable);
  EXPECT_FALSE((*nodes)[2].unavailable);
  EXPECT_TRUE((*nodes)[3].unavailable);
}

TEST(SlurmParse, GresGpus) {
  struct Case {
    const char* gres;
    std::optional<int> want;
  };
  const std::vector<Case> cases = {
      {"gpu:4", 4},
      {"gpu:a100:8(S:0-1)", 8},
      {"gpu:a100:4(S:0),gpu:t4:2(S:1)", 6},
      {"gpu:2(S:0,1),mps:100", 2},  // a comma inside the binding is not an entry
      {"gpu", 1},
      {"gpu:a100", 1},
      {"gpu:0", 0},
      {"mps:400,nic:2", 0},
      {"(null)", 0},
      {"", 0},
      {"gpus:4", 0},  // another gres's name
      {"gpu:4x", std::nullopt},
      {"gpu:a100:x", std::nullopt},
      {"gpu:99999999", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.gres);
    EXPECT_EQ(GresGpus(c.gres), c.want);
  }
}

TEST(SlurmParse, SinfoGresFromSlurm2205) {
  // Three nodes with Gres=gpu:4, node2 drained (tests/integration/lib/slurm.sh with
  // SLURM_GPUS_PER_NODE=4), in both formats.
  for (const char* file : {"sinfo_gres_drained.json", "sinfo_gres_drained.txt"}) {
    SCOPED_TRACE(file);
    const std::string text = Testdata(file);
    Result<std::vector<SlurmNode>> nodes = std::string(file).find(".json") != std::string::npos
                                               ? ParseSinfoJson(text)
                                               : ParseSinfoText(text);
    ASSERT_TRUE(nodes.ok()) << nodes.status().message();
    ASSERT_EQ(nodes->size(), 3u);
    for (const SlurmNode& n : *nodes) EXPECT_EQ(n.gpus, 4) << n.name;
    EXPECT_TRUE((*nodes)[1].unavailable);
    EXPECT_FALSE((*nodes)[0].unavailable);
  }
  Result<std::vector<SlurmNode>> bad = ParseSinfoText("node1|127.0.0.1|idle|debug*|gpu:lots:x\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node node1: unreadable GPU count in gres 'gpu:lots:x'"),
            std::string::npos)
      << bad.status().message();
}

TEST(SlurmParse, JobTags) {
  struct Case {
    const char* comment;
    const char* workload;
    std::optional<int> want;
  };
  const std::vector<Case> cases = {
      {"aiscale:llm:0", "llm", 0},
      {"aiscale:serving/llm:12", "serving/llm", 12},
      {"aiscale:llm:12", "llm2", std::nullopt},
      {"aiscale:llm2:1", "llm", std::nullopt},
      {"aiscale:llm:", "llm", std::nullopt},
      {"aiscale:llm:1x", "llm", std::nullopt},
      {"aiscale:llm:-1", "llm", std::nullopt},
      {"", "llm", std::nullopt},
      {"aiscale:llm:99999999999", "llm", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.comment);
    EXPECT_EQ(ParseJobTag(c.comment, c.workload), c.want);
  }
  EXPECT_EQ(JobTag("serving/llm", 3), "aiscale:serving/llm:3");
  EXPECT_EQ(ParseJobTag(JobTag("llm", 7), "llm"), 7);
}

}  // namespace
}  // namespace aiscale::act
