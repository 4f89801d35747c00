// Stabilizer implementations and their factory.
//
// HpaBehaviorStabilizer is the Kubernetes autoscaling/v2 `behavior`: stabilization windows
// (0 s up, 300 s down by default), Pods/Percent policies per period, selectPolicy
// Max/Min/Disabled. Used by default for the `hpa` policy and for any workload with `behavior`.
#pragma once

#include <memory>

#include "core/config/config_node.h"
#include "core/policy.h"
#include "core/result.h"

namespace aiscale::decide {

// `behavior` is the workload's behavior node (may be undefined). With `hpa_defaults`, an
// absent behavior means the Kubernetes defaults; otherwise an absent behavior means no
// stabilizer (nullptr). Errors are recorded in the node's ConfigErrors.
std::unique_ptr<Stabilizer> CreateStabilizer(const config::ConfigNode& behavior,
                                             bool hpa_defaults);

}  // namespace aiscale::decide
