#include <iostream>

#include "cli/commands.h"

namespace aiscale::cli {

// Not implemented yet: replaced by its owner's work (issue 2).
int Conformance(const Args& args) {
  (void)args;
  std::cerr << "aiscale: Conformance is not implemented yet\n";
  return 2;
}

}  // namespace aiscale::cli
