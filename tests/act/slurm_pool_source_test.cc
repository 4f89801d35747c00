// The pool's size read from Slurm (pool: {from: slurm}), on sinfo output from a fake runner in
// the formats Slurm 22.05 prints (tests/act/testdata/slurm: captured from a real cluster).
#include "act/slurm_pool_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace aiscale::act {
namespace {

// Answers `sinfo` with a fixed text (or exit code), and records the calls.
class FakeSinfo final : public CommandRunner {
 public:
  FakeSinfo(std::string json, std::string text, int exit_code = 0)
      : json_(std::move(json)), text_(std::move(text)), exit_code_(exit_code) {}
  Result<CommandOutput> Run(const std::vector<std::string>& argv,
                            const std::vector<std::pair<std::string, std::string>>&,
                            Duration) override {
    calls.push_back(argv);
    if (argv.empty() || argv[0] != "sinfo") return Status::NotFound("no such command");
    if (exit_code_ != 0) return CommandOutput{exit_code_, "", "slurm_load_node: Unable to contact"};
    const bool json = std::find(argv.begin(), argv.end(), "--json") != argv.end();
    if (json && json_.empty()) return CommandOutput{1, "", "sinfo: unrecognized option '--json'"};
    return CommandOutput{0, json ? json_ : text_, ""};
  }
  std::vector<std::vector<std::string>> calls;

 private:
  std::string json_, text_;
  int exit_code_;
};

Result<PoolCapacity> Observe(std::string json, std::string text, const std::string& partition,
                             int exit_code = 0) {
  auto runner = std::make_shared<FakeSinfo>(std::move(json), std::move(text), exit_code);
  SlurmPoolSource source(runner, SlurmCliOptions{}, partition);
  return source.Observe();
}

TEST(SlurmPoolSource, CountsTheGpusOfUsableNodesOnce) {
  struct Case {
    std::string name;
    std::string text;  // sinfo -h -N -o '%N|%o|%T|%P|%G'
    std::string partition;
    int64_t gpus;        // -1: an error
    std::string detail;  // substring of the detail, or of the error
  };
  const std::vector<Case> cases = {
      {"three idle nodes of 4",
       "n1|a|idle|gpu|gpu:4\nn2|b|mixed|gpu|gpu:4\nn3|c|allocated|gpu|gpu:4\n", "gpu", 12,
       "12 GPUs on 3 usable node(s) of partition gpu"},
      {"a drained node adds nothing and is named", "n1|a|idle|gpu|gpu:4\nn2|b|drained|gpu|gpu:4\n",
       "gpu", 4, "not counted: n2 (drained, 4 GPUs)"},
      {"not responding (idle*) adds nothing", "n1|a|idle*|gpu|gpu:8\nn2|b|idle|gpu|gpu:8\n", "gpu",
       8, "8 GPUs on 1 usable node(s) of partition gpu (Slurm gres); not counted: n1 (idle*, 8"},
      {"a node in two partitions counts once",
       "n1|a|idle|gpu|gpu:a100:8(S:0-1)\nn1|a|idle|all|gpu:a100:8(S:0-1)\n", "", 8,
       "of the cluster"},
      {"only the partition asked for", "n1|a|idle|gpu|gpu:4\nn2|b|idle|cpu|(null)\n", "gpu", 4,
       "1 usable node(s)"},
      {"a CPU node beside GPU nodes", "n1|a|idle|all|gpu:2\nn2|b|idle|all|(null)\n", "all", 2,
       "2 GPUs on 1 usable node(s)"},
      {"every GPU node down: a real 0", "n1|a|down|gpu|gpu:4\n", "gpu", 0, "not counted: n1"},
      {"no node declares a GPU: unknown, not 0", "n1|a|idle|gpu|(null)\n", "gpu", -1,
       "declares a GPU in its gres"},
      {"no node in the partition: unknown", "n1|a|idle|cpu|gpu:4\n", "gpu", -1,
       "no node in partition gpu"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<PoolCapacity> got = Observe("", c.text, c.partition);
    if (c.gpus < 0) {
      ASSERT_FALSE(got.ok());
      EXPECT_NE(got.status().message().find(c.detail), std::string::npos) << got.status().message();
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(got->gpus, c.gpus);
    EXPECT_NE(got->detail.find(c.detail), std::string::npos) << got->detail;
  }
}

TEST(SlurmPoolSource, SlurmDownIsAnErrorNotAnEmptyPool) {
  Result<PoolCapacity> got = Observe("", "", "gpu", 1);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("unable to read the pool's size from Slurm"),
            std::string::npos)
      << got.status().message();
}

TEST(SlurmPoolSource, ReadsSlurm2205Json) {
  // Captured: node1..3 with Gres=gpu:4, node2 drained.
  std::ifstream in(std::string(AISCALE_SOURCE_DIR) +
                   "/tests/act/testdata/slurm/sinfo_gres_drained.json");
  std::stringstream json;
  json << in.rdbuf();
  Result<PoolCapacity> got = Observe(json.str(), "", "debug");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->gpus, 8);
  EXPECT_NE(got->detail.find("not counted: node2 (idle+drain, 4 GPUs)"), std::string::npos)
      << got->detail;
}

}  // namespace
}  // namespace aiscale::act
