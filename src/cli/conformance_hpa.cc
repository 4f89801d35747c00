#include <iostream>

#include "cli/commands.h"

namespace aiscale::cli {

// Not implemented yet: replaced by its owner's work.
int ConformanceHpa(const std::string& file) {
  std::cerr << "aiscale: conformance hpa is not implemented yet (" << file << ")\n";
  return 2;
}

}  // namespace aiscale::cli
