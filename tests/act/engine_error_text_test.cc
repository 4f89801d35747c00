// What the engines say when their inputs go bad mid-run (issue 8): a failed Slurm command's
// message keeps every "error:" line it printed (sbatch splits one message over three lines),
// and a token file that vanished is named when the API server then refuses the old token.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "act/kubernetes_auth.h"
#include "act/slurm_cli.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;

// Answers every command with one canned output.
class CannedRunner final : public CommandRunner {
 public:
  explicit CannedRunner(CommandOutput out) : out_(std::move(out)) {}
  Result<CommandOutput> Run(const std::vector<std::string>&,
                            const std::vector<std::pair<std::string, std::string>>&,
                            Duration) override {
    return out_;
  }

 private:
  CommandOutput out_;
};

TEST(SlurmCommandErrors, KeepEveryErrorLine) {
  struct Case {
    const char* name;
    CommandOutput out;
    std::string want;  // the whole message
  };
  const std::vector<Case> cases = {
      {"sbatch's three-line message",
       {1, "",
        "sbatch: error: This does not look like a batch script.  The first\n"
        "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
        "sbatch: error: For instance: #!/bin/sh\n"},
       "sbatch failed: sbatch: error: This does not look like a batch script.  The first line "
       "must start with #! followed by the path to an interpreter. For instance: #!/bin/sh"},
      {"one line",
       {1, "", "sbatch: error: Batch job submission failed: Invalid partition name specified\n"},
       "sbatch failed: sbatch: error: Batch job submission failed: Invalid partition name "
       "specified"},
      {"no error: prefix: the last line",
       {1, "", "warming up\nsomething broke\n"},
       "sbatch failed: something broke"},
      {"nothing printed", {3, "", ""}, "sbatch failed: exit status 3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CannedRunner runner(c.out);
    SlurmCli cli(runner, SlurmCliOptions{});
    Result<std::string> id = cli.Submit({}, "/tmp/x.sbatch");
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.status().message(), c.want);
  }
}

TEST(KubeTokenSource, AVanishedFileIsNamedWhileItsLastTokenStandsIn) {
  const fs::path path =
      fs::temp_directory_path() / ("aiscale-tok-gone-" + std::to_string(::getpid()));
  std::ofstream(path) << "tok-1\n";
  KubeEndpoint ep;
  ep.token_file = path.string();
  KubeTokenSource src(ep);
  EXPECT_EQ(*src.Token(), "tok-1");
  EXPECT_EQ(src.Problem(), "");
  fs::remove(path);
  EXPECT_EQ(*src.Token(), "tok-1");
  EXPECT_NE(src.Problem().find("token file " + path.string() + " is unreadable"), std::string::npos)
      << src.Problem();
  EXPECT_EQ(src.Problem().find("tok-1"), std::string::npos);  // never the token itself
  std::ofstream(path) << "tok-2\n";                           // rotated in
  EXPECT_EQ(*src.Token(), "tok-2");
  EXPECT_EQ(src.Problem(), "");
  fs::remove(path);
}

}  // namespace
}  // namespace aiscale::act
