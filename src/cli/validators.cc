#include "cli/validators.h"

#include "cli/controller_config.h"
#include "sim/scenario.h"

namespace aiscale::cli {

const std::vector<std::string>& KnownKinds() {
  static const std::vector<std::string> kKinds = {"ControllerConfig", "Scenario"};
  return kKinds;
}

const std::vector<KindValidator>& Validators() {
  // One line per kind. Keep alphabetical.
  static const std::vector<KindValidator> kValidators = {
      {"ControllerConfig", &ValidateControllerConfig},
      {"Scenario", &sim::ValidateScenario},
  };
  return kValidators;
}

Validator FindValidator(const std::string& kind) {
  for (const auto& v : Validators()) {
    if (v.kind == kind) return v.validate;
  }
  return nullptr;
}

}  // namespace aiscale::cli
