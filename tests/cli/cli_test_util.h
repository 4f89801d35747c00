// Small helpers of the cli tests that drive the built `aiscale` binary: run it, read a whole
// file (a log, a report) and poll a condition with a time limit. Header-only; no state.
//
//   ASSERT_TRUE(WaitFor([&] { return ReadText(log).find("became leader") != npos; }, 10));
#pragma once

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

namespace aiscale::cli {

struct RunResult {
  int code = -1;    // the exit status; -1 when it could not run or was killed by a signal
  std::string out;  // stdout, and stderr unless it was left out
};

// Runs the built binary (AISCALE_BINARY) with `args`, shell words, to the end.
inline RunResult RunAiscale(const std::string& args, bool with_stderr = true) {
  RunResult r;
  const std::string cmd =
      std::string(AISCALE_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The file's contents; "" when it cannot be read.
inline std::string ReadText(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Polls `cond` every 10 ms until it holds or `limit_s` seconds passed; its last value.
inline bool WaitFor(const std::function<bool()>& cond, double limit_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < until) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

}  // namespace aiscale::cli
