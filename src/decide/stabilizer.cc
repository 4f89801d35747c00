#include "decide/stabilizer.h"

namespace aiscale::decide {

// Placeholder until the HPA behavior stabilizer lands (issue 2, HPA part).
std::unique_ptr<Stabilizer> CreateStabilizer(const config::ConfigNode& behavior,
                                             bool hpa_defaults) {
  (void)behavior;
  (void)hpa_defaults;
  return nullptr;
}

}  // namespace aiscale::decide
