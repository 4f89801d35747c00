// Small helpers of the cli tests that drive the built `aiscale` binary: run it, start it in
// the background, read a whole file (a log, a report) and poll a condition with a time limit.
// Header-only; no state.
//
//   ASSERT_TRUE(WaitFor([&] { return ReadText(log).find("became leader") != npos; }, 10));
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

// Starts the built binary with `args` in the background, stdout and stderr to `log`, with the
// test's environment plus `env` ("NAME=value", replacing a variable of that name); returns
// its pid (-1 when fork failed). Everything is built before the fork: the child of a process
// with other threads may only make async-signal-safe calls until it execs — a malloc there
// can wait forever on a lock another thread held at the fork (an allocator under ASan has
// more of them), and the daemon never starts.
inline pid_t SpawnAiscale(const std::vector<std::string>& args, const std::string& log,
                          const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv_s = {AISCALE_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s;
  for (char** e = environ; e && *e; ++e) {
    const std::string var = *e;
    bool replaced = false;
    for (const std::string& x : env) {
      replaced = replaced || var.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    }
    if (!replaced) env_s.push_back(var);
  }
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> argv, envp;
  for (std::string& a : argv_s) argv.push_back(a.data());
  for (std::string& e : env_s) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
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
