// ControllerConfig: the file `aiscale run` will read (kind: ControllerConfig): the control
// period, the store, and each workload with its constraints, behavior, policy and signals.
//
// Why here: only cli wires sources, actuators and the store to workloads, so only cli knows
// the whole shape. Parsing follows STYLE.md 7: defaults beside each field, unknown fields
// rejected, every error recorded with file:line:column and field path, and each workload's
// pipeline (policy, stabilizer, constraints) built once with decide::BuildPipeline, so a
// config that parses cannot fail later on a policy field. No half-valid config escapes.
//
//   config::ConfigErrors errs;
//   auto root = config::LoadConfigFile(path, errs);
//   auto cfg = ParseControllerConfig(root, *registry);  // errors land in errs
#pragma once

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/result.h"
#include "core/scale.h"
#include "decide/pipeline.h"
#include "decide/policy_registry.h"

namespace aiscale::cli {

struct SignalConfig {
  std::string name;    // canonical signal name the policy reads
  std::string source;  // one of KnownSources()
  std::string query;   // source-specific (PromQL, metric name); may be empty
};

struct ControllerWorkload {
  WorkloadRef ref;
  std::vector<SignalConfig> signals;
  double staleness_s = 45;  // default: 3 control periods
  double cold_start_s = 0;  // provisioning + model load, or restart cost
  decide::Pipeline pipeline;
};

struct ControllerConfig {
  double period_s = 15;
  std::string store_path;  // empty: decisions and state are not persisted
  std::vector<ControllerWorkload> workloads;
};

// Where a signal may come from (DESIGN.md "Seams": MetricSource implementations).
const std::vector<std::string>& KnownSources();

// Reads a parsed ControllerConfig document, header included. Every error is recorded in
// root.errors(); the result is an error when any was recorded.
Result<ControllerConfig> ParseControllerConfig(const config::ConfigNode& root,
                                               const decide::PolicyRegistry& registry);
// For `aiscale validate`: the same checks with the default policy registry.
Status ValidateControllerConfig(const config::ConfigNode& root);

}  // namespace aiscale::cli
