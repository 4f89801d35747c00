// The operator's fields of a workload in the API (what `aiscale status` and the dashboard
// show): bounds, the override in force, conditions, and each signal as value/target with its
// freshness. Added to both the list and the detail body.
//
// Pure; never throws; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "core/steering.h"
#include "core/workload_view.h"

namespace aiscale::server {

// {"mode": "paused", "direction": "down", "source": "API", "since": "...", "until": null,
//  "description": "..."}; {"mode": "none"} when none is in force.
nlohmann::json SteeringJson(const Steering& s);
// Adds min_replicas, max_replicas, steering, conditions, rule, rule_since (and rule_since_s,
// Unix seconds) and
// signal_status (name, value, target, status, age_s, source per signal) to `j`.
void AddStatusFields(const WorkloadView& w, nlohmann::json& j);

}  // namespace aiscale::server
