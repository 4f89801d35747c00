// Config reload (SIGHUP): what a new version of the controller config may change while
// `aiscale run` keeps running, and the check that it changes nothing else.
//
// Reloadable: each workload's policy, behavior, bounds (min/max/granularity), staleness and
// cold start, and the server's token. Everything else (sources, targets, signals, the store,
// the server's address, the period, leader election, the set of workloads) needs a restart;
// a file that changes any of it is rejected as a whole, naming the first difference, and the
// running config stays. Pure over parsed YAML; thread-safe.
#pragma once

#include <map>
#include <string>

#include "core/config/config_node.h"

namespace aiscale::cli {

// The restart-only parts of a ControllerConfig document: field path -> canonical text.
using RestartParts = std::map<std::string, std::string>;
RestartParts RestartPartsOf(const config::ConfigNode& root);
// The first field path whose restart-only part differs ("spec.sources",
// "spec.workloads[chat].target", "spec.workloads (added or removed)"); "" when none does.
std::string RestartDifference(const RestartParts& before, const RestartParts& after);

}  // namespace aiscale::cli
