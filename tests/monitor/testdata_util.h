// Reads the canned exposition payloads under tests/monitor/testdata/ (see its README.md).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace aiscale::monitor::testing {

inline std::string ReadTestdata(const std::string& name) {
  std::ifstream in(std::string(AISCALE_SOURCE_DIR) + "/tests/monitor/testdata/" + name,
                   std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace aiscale::monitor::testing
