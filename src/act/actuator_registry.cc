#include "act/actuator_registry.h"

namespace aiscale::act {

Result<ActuatorRegistry> DefaultActuatorRegistry() {
  // One line per engine. Keep alphabetical.
  return ActuatorRegistry::FromEntries("engine", {});
}

}  // namespace aiscale::act
