// Scenario: a simulation run described in YAML (`apiVersion: aiscale.dev/v1alpha1`,
// `kind: Scenario`): the cluster, injected failures, the workloads with their policies, and the
// policies to compare side by side.
//
// Why: `aiscale simulate`, `aiscale demo` and `aiscale validate` read the same file the same
// way. Parsing records every error with file:line:column and the field path; a Scenario is
// returned only when there are none, and by then every workload and every compared policy has
// been built once against a scratch cluster, so a run cannot fail on config.
//
//   auto s = LoadScenario("examples/demo-bert-large.yaml");
//   if (!s.ok()) { std::cerr << s.status().message(); return 1; }  // one error per line
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/result.h"
#include "core/spec.h"
#include "report/run_summary.h"
#include "report/targets.h"
#include "sim/cluster.h"

namespace aiscale::sim {

struct ScenarioWorkload {
  std::string name;
  std::string kind;
  int initial_replicas = 1;
  // `initial_replicas: auto`: every run starts warm at the size the workload's own data says
  // its first interval needs (SimWorkload::BaselineReplicas("warm-start")), as a service that
  // was already carrying that traffic would; initial_replicas is then min_replicas.
  bool initial_auto = false;
  config::ConfigNode node;  // the whole workload entry
  // The fields a ControllerConfig workload shares (name, kind, bounds, staleness), read by the
  // same code; its pipeline is the workload's own policy. cold_start_s is the model's
  // (SimWorkload::ColdStartSeconds of the build made while parsing).
  WorkloadSpec spec;
};

// One policy to run: its label in the report and, per workload, the policy node it came from
// and the pipeline built from it once.
struct PolicyRun {
  std::string label;
  // Whether the run is a baseline of the report: `static` and `static-peak` are (the one
  // place that knows them by name is PlanRuns).
  report::Baseline baseline = report::Baseline::kNone;
  // What the run stands for in a pool comparison (a per-workload compare entry's `role`):
  // static_partition, separate_autoscalers, whole_job, pool, alone; empty otherwise.
  std::string role;
  // The shared GPU pool this run uses: the scenario's, with the compare entry's overrides
  // (`pool: off` runs without the allocator; the pool still limits what can start).
  std::optional<PoolSpec> pool;
  std::vector<config::ConfigNode> policy_nodes;  // one per workload, in order
  // Per workload: a compare entry gave it a static size, which it then holds from the start
  // (a partition starts partitioned; otherwise a workload starts at initial_replicas).
  std::vector<bool> start_at_static;
  std::vector<PolicySpec> pipelines;  // one per workload, in order
};

struct Scenario {
  // Owns the YAML and the error sink the nodes point into; shared so copies stay valid.
  std::shared_ptr<config::ConfigErrors> errors;
  std::string file;
  std::string name;
  uint64_t seed = 1;
  double duration_s = 86400;
  double control_period_s = 15;
  double report_interval_s = 60;
  double scrape_interval_s = 15;
  double noise = 0.02;
  ClusterConfig cluster;
  std::vector<FailureSpec> failures;
  std::vector<ScenarioWorkload> workloads;
  // `pool:` (decide/pool_config.h): every workload shares it; its size must be a number here.
  std::optional<PoolSpec> pool;
  std::optional<config::ConfigNode> pool_node;  // as written, for compare entries to override
  report::Targets targets;                      // `targets:`, what the report judges runs against
  std::vector<std::string> compare;             // compare entries as given (names)
  std::vector<config::ConfigNode> compare_nodes;
  std::vector<std::optional<PoolSpec>> compare_pools;  // per compare entry
  // The runs of `compare` (or the default pair), built while parsing.
  std::vector<PolicyRun> planned;

  // The runs for `policies` (as from --policy), or the planned ones when empty. A name is a
  // compare entry's label (that entry, with its parameters), else `static` (each workload at
  // its initial_replicas), a workload's own policy name (that node) or a registered policy
  // (its defaults); anything else is kInvalid listing the labels the scenario compares. Each
  // run's pipelines are built here, once.
  Result<std::vector<PolicyRun>> Runs(const std::vector<std::string>& policies,
                                      config::ConfigErrors* synth_errors = nullptr) const;
  // The same runs with their policy nodes only (no pipelines built).
  Result<std::vector<PolicyRun>> PlanRuns(const std::vector<std::string>& policies,
                                          config::ConfigErrors* synth_errors = nullptr) const;
  // The compare entry labelled `name` (its index); -1 for static, a workload's own policy or a
  // registered policy; kInvalid listing the known names otherwise.
  Result<int> CompareIndexOf(const std::string& name) const;
};

Result<Scenario> LoadScenario(const std::string& path);
Result<Scenario> ParseScenario(const std::string& text, const std::string& file);
// For `aiscale validate`: records every error of a parsed Scenario document in root.errors()
// (including policy and workload config, checked by building each once); error if any.
Status ValidateScenario(const config::ConfigNode& root);

}  // namespace aiscale::sim
