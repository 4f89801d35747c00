// The explicit list of engines a workload's `target:` may name (docs/architecture.md "Seams":
// Actuator implementations). Adding an engine: its files in act/ and one line in
// actuator_registry.cc.
#pragma once

#include "core/config/spec_registry.h"
#include "core/spec.h"

namespace aiscale::act {

using ActuatorRegistry = config::SpecRegistry<TargetSpec>;
Result<ActuatorRegistry> DefaultActuatorRegistry();

}  // namespace aiscale::act
