#include <iostream>

#include "cli/commands.h"

namespace aiscale::cli {

// Not implemented yet: replaced by its owner's work (issue 2).
int Validate(const Args& args) {
  (void)args;
  std::cerr << "aiscale: Validate is not implemented yet\n";
  return 2;
}

}  // namespace aiscale::cli
