#include <iostream>

#include "cli/commands.h"

namespace aiscale::cli {

// Not implemented yet: replaced by its owner's work.
int ConformanceKpa(const std::string& file) {
  std::cerr << "aiscale: conformance kpa is not implemented yet (" << file << ")\n";
  return 2;
}

}  // namespace aiscale::cli
