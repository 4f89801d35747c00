// `aiscale <command> --help` for every command: the usage on stdout and exit 0 (asking for
// help is not an error), and a bad flag: the usage on stderr and exit 2.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

namespace aiscale::cli {
namespace {

TEST(Usage, HelpIsOnStdoutAndExitsZeroBadFlagsExitTwo) {
  const std::vector<std::string> commands = {"demo", "simulate", "conformance", "validate",
                                             "run",  "explain",  "calibrate",   "crd"};
  for (const auto& c : commands) {
    SCOPED_TRACE(c);
    const RunResult help = RunAiscale(c + " --help", /*with_stderr=*/false);
    EXPECT_EQ(help.code, 0) << help.out;
    EXPECT_EQ(help.out.rfind("usage: aiscale " + c, 0), 0u) << help.out;
    const RunResult bad = RunAiscale(c + " --frobnicate", /*with_stderr=*/false);
    EXPECT_EQ(bad.code, 2) << bad.out;
    EXPECT_EQ(bad.out, "");
  }
}

}  // namespace
}  // namespace aiscale::cli
