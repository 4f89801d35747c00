// Small helpers of the cli tests that drive the built `aiscale` binary: read a whole file (a
// log, a report) and poll a condition with a time limit. Header-only; no state.
//
//   ASSERT_TRUE(WaitFor([&] { return ReadText(log).find("became leader") != npos; }, 10));
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

namespace aiscale::cli {

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
