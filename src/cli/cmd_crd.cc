// aiscale crd: prints the AIScaler CustomResourceDefinition generated from the workload readers
// (cli/aiscaler_crd.h). deploy/06-aiscaler-crd.yaml is its output.
#include <iostream>

#include "cli/aiscaler_crd.h"
#include "cli/commands.h"

namespace aiscale::cli {

int Crd(const Args& args) {
  if (!args.empty()) {
    const bool help = args[0] == "-h" || args[0] == "--help";
    (help ? std::cout : std::cerr)
        << "usage: aiscale crd > deploy/06-aiscaler-crd.yaml\n\n"
           "Prints the AIScaler CustomResourceDefinition (aiscalers.aiscale.dev), its spec schema "
           "generated from the readers of a controller config's workloads.\n";
    return help ? 0 : 2;
  }
  Result<nlohmann::json> crd = AiScalerCrd();
  if (!crd.ok()) {
    std::cerr << "aiscale crd: " << crd.status().message() << "\n";
    return 1;
  }
  std::cout << ToYaml(*crd, kCrdHeader);
  return 0;
}

}  // namespace aiscale::cli
