// `aiscale <command> --help` for every command: the usage on stdout and exit 0 (asking for
// help is not an error), and a bad flag: the usage on stderr and exit 2.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace aiscale::cli {
namespace {

struct Ran {
  int code = -1;
  std::string out;  // stdout only
};

Ran RunAiscale(const std::string& args) {
  Ran r;
  const std::string cmd = std::string(AISCALE_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(Usage, HelpIsOnStdoutAndExitsZeroBadFlagsExitTwo) {
  const std::vector<std::string> commands = {"demo", "simulate", "conformance", "validate",
                                             "run",  "explain",  "calibrate"};
  for (const auto& c : commands) {
    SCOPED_TRACE(c);
    const Ran help = RunAiscale(c + " --help");
    EXPECT_EQ(help.code, 0) << help.out;
    EXPECT_EQ(help.out.rfind("usage: aiscale " + c, 0), 0u) << help.out;
    const Ran bad = RunAiscale(c + " --frobnicate");
    EXPECT_EQ(bad.code, 2) << bad.out;
    EXPECT_EQ(bad.out, "");
  }
}

}  // namespace
}  // namespace aiscale::cli
