// Fixtures shared by the sim tests: a valid training scenario kept as lines for a case to edit,
// gzip in memory (the real traces are stored gzipped), and a gtest fixture with a temp dir to
// write input files into. Header-only; each test binary gets its own copy. Not thread-safe.
//
//   const std::string yaml = EditLines(kTrainingScenario, {{8, "    nodes: 0"}});
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>

namespace aiscale::sim::fixtures {

// A valid training scenario (1-based line numbers in the comments).
inline const std::vector<std::string> kTrainingScenario = {
    "apiVersion: aiscale.dev/v1alpha1",  // 1
    "kind: Scenario",                    // 2
    "spec:",                             // 3
    "  name: t",                         // 4
    "  seed: 1",                         // 5
    "  duration: 10h",                   // 6
    "  cluster:",                        // 7
    "    nodes: 4",                      // 8
    "    gpus_per_node: 8",              // 9
    "    provisioning_delay: 1m",        // 10
    "  workloads:",                      // 11
    "    - name: j",                     // 12
    "      kind: TrainingJob",           // 13
    "      min_replicas: 1",             // 14
    "      max_replicas: 4",             // 15
    "      granularity: 1",              // 16
    "      initial_replicas: 2",         // 17
    "      policy: {name: static}",      // 18
    "      job:",                        // 19
    "        total_steps: 1000",         // 20
    "        epochs: 2",                 // 21
    "  compare: [static]",               // 22
};

// `lines` as one text, each line whose 1-based number is a key of `edits` replaced by its value
// (which may hold several lines).
inline std::string EditLines(const std::vector<std::string>& lines,
                             const std::map<int, std::string>& edits) {
  std::ostringstream os;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto it = edits.find(static_cast<int>(i) + 1);
    os << (it == edits.end() ? lines[i] : it->second) << "\n";
  }
  return os.str();
}

// `text` as one gzip member.
inline std::string Gzip(const std::string& text) {
  uLongf n = compressBound(static_cast<uLong>(text.size())) + 32;
  std::string out(n, '\0');
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(n);
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A fixture owning <TempDir>/<prefix>_<pid>, created before each test and removed after it.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(const std::string& prefix)
      : dir_(std::filesystem::path(::testing::TempDir()) /
             (prefix + "_" + std::to_string(::getpid()))) {}
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Writes `bytes` to a new file in the dir and returns its path.
  std::string Write(const std::string& bytes) {
    const std::string p = (dir_ / ("f" + std::to_string(n_++))).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  std::filesystem::path dir_;
  int n_ = 0;
};

}  // namespace aiscale::sim::fixtures
