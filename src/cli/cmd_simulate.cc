#include <iostream>

#include "cli/commands.h"

namespace aiscale::cli {

// Not implemented yet: replaced by its owner's work (issue 2).
int Demo(const Args& args) {
  (void)args;
  std::cerr << "aiscale: Demo is not implemented yet\n";
  return 2;
}

// Not implemented yet: replaced by its owner's work (issue 2).
int Simulate(const Args& args) {
  (void)args;
  std::cerr << "aiscale: Simulate is not implemented yet\n";
  return 2;
}

}  // namespace aiscale::cli
