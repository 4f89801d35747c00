// A driver for the libFuzzer harnesses without libFuzzer: feeds every file under the given
// directories (or the given files) to LLVMFuzzerTestOneInput once, in name order. Built by
// every compiler (GCC included) as <harness>_replay and run by CTest as fuzz_replay.<name>, so
// each corpus input (the seeds and every crash found and fixed) is replayed in every build —
// and under ASan+UBSan in scripts/sanitize.sh — without the clang fuzz build.
// Exits 0 when every input ran, 2 on a usage error or an unreadable input; a crash is a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// libFuzzer's default -max_len for a corpus of small seeds is 4096; the seeds here are at most
// a few hundred KB, so a bound far above that only guards against a path named by mistake.
constexpr std::uintmax_t kMaxInputBytes = 16u << 20;

bool Collect(const fs::path& p, std::vector<fs::path>& out) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
      if (e.is_regular_file()) out.push_back(e.path());
    }
  } else if (fs::is_regular_file(p, ec)) {
    out.push_back(p);
  } else {
    std::cerr << "replay: " << p.string() << ": not a regular file or directory\n";
    return false;
  }
  return !ec;
}

bool RunOne(const fs::path& p) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec || size > kMaxInputBytes) {
    std::cerr << "replay: " << p.string() << ": unreadable or larger than 16 MiB\n";
    return false;
  }
  std::ifstream in(p, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR_OR_FILE...\n";
    return 2;
  }
  std::vector<fs::path> inputs;
  bool ok = true;
  for (int i = 1; i < argc; ++i) ok = Collect(argv[i], inputs) && ok;
  std::sort(inputs.begin(), inputs.end());
  for (const auto& p : inputs) ok = RunOne(p) && ok;
  std::cout << "replay: " << inputs.size() << " inputs" << (ok ? "" : ", with errors") << "\n";
  return inputs.empty() || !ok ? 2 : 0;
}
