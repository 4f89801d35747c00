#include <iostream>

#include "cli/commands.h"

namespace aiscale::cli {

int Conformance(const Args& args) {
  if (args.size() == 2 && args[0] == "hpa") return ConformanceHpa(args[1]);
  if (args.size() == 2 && args[0] == "kpa") return ConformanceKpa(args[1]);
  const bool help = args.size() == 1 && (args[0] == "--help" || args[0] == "-h");
  (help ? std::cout : std::cerr)
      << "usage: aiscale conformance hpa|kpa FILE\n"
         "  evaluates a vector file (schema: shared/conformance/README.md), prints one\n"
         "  line per case and `N passed, N failed`; exits 1 if any case failed.\n";
  return help ? 0 : 2;
}

}  // namespace aiscale::cli
