// Where conformance vector files live for tests: the shared folder (AISCALE_SHARED_DIR, from
// the environment or the build) and the project's own tests/conformance/. Shared by the hpa
// and kpa conformance tests so both find files the same way.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace aiscale::testing {

inline std::string SharedDir() {
  const char* env = std::getenv("AISCALE_SHARED_DIR");
  return env != nullptr && *env != '\0' ? env : AISCALE_SHARED_DIR;
}

// `<prefix>*.json` files in dir, sorted; empty when dir does not exist.
inline std::vector<std::filesystem::path> VectorFiles(const std::filesystem::path& dir,
                                                      const std::string& prefix) {
  std::vector<std::filesystem::path> out;
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace aiscale::testing
