// ControllerConfig: the file `aiscale run` reads (kind: ControllerConfig): the control period,
// the store, the HTTP server, leader election, the named metric sources, and each workload with its
// bounds, behavior, policy, signals (each from a named source) and target (the engine it runs on).
//
// Parsing follows docs/architecture.md practice 7: defaults beside each field, unknown fields
// rejected, every error recorded with file:line:column and field path. Everything is parsed once
// into typed specs: the workload fields by decide::ReadWorkloadFields (as the Scenario reads them),
// the pipeline by decide::BuildPipeline, sources and targets by their registries, which validate
// their own fields and capture them in factories. No half-valid config escapes, and after parsing
// nothing reads YAML again.
//
//   config::ConfigErrors errs;
//   auto root = config::LoadConfigFile(path, errs);
//   auto cfg = ParseControllerConfig(root);  // errors land in errs
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "act/actuator_registry.h"
#include "act/kubernetes_lease.h"
#include "cli/aiscaler_config.h"
#include "core/config/config_node.h"
#include "core/result.h"
#include "core/spec.h"
#include "decide/policy_registry.h"
#include "monitor/source_registry.h"
#include "store/store_options.h"

namespace aiscale::cli {

struct ServerConfig {
  bool enabled = true;
  std::string host = "127.0.0.1";  // loopback unless the user says otherwise
  int port = 9464;                 // 0: any free port
  // The bearer token of the steering endpoints (pause, resume, pin), read from `token_file`
  // (or given inline as `token`); empty: steering is off. Never logged.
  std::string token;
  std::string token_file;  // where it was read from, resolved against the config's directory
};

// What `store: PATH` means: changes and 5-minute heartbeats, everything kept, fsync per commit.
inline store::StoreOptions DefaultStoreOptions() {
  store::StoreOptions o;
  o.heartbeat = Seconds(300);
  return o;
}

// The shortest `period` accepted (docs/limits.md).
inline constexpr double kMinPeriodS = 0.1;

struct ControllerConfig {
  std::string file;        // where it was read from
  double period_s = 15;    // >= kMinPeriodS
  std::string store_path;  // empty: decisions and state are not persisted
  // `store:` as a map: heartbeat (changes only, plus one record per heartbeat), retention, sync,
  // snapshot_ticks, cache_mib.
  store::StoreOptions store_options = DefaultStoreOptions();
  std::string run_dir;  // the daemon's own files (replica pid records); default beside the store
  ServerConfig server;
  // Off unless the file has a leader_election map; its connection is resolved as a kubernetes
  // target's `auth:` (in-cluster, else $KUBECONFIG, else ~/.kube/config).
  act::LeaderElectionConfig leader_election;
  std::vector<SourceSpec> sources;
  // `pool:`: the shared GPU pool every workload is placed in (decide/pool_config.h); absent:
  // each workload is scaled on its own.
  std::optional<PoolSpec> pool;
  // pool.kubernetes (with from: kubernetes): how the pool's size is read from the API server,
  // resolved as a kubernetes target's `auth:`; each call's deadline.
  act::KubeAuthConfig pool_kube_auth;
  Duration pool_kube_timeout = Seconds(10);
  std::vector<WorkloadSpec> workloads;
  // `aiscalers:`: workloads from AIScaler objects watched on Kubernetes (docs/kubernetes.md).
  AiScalerWatchConfig aiscalers;
};

// What a workload's fields are read with: the policy, source and engine registries.
struct WorkloadRegistries {
  decide::PolicyRegistry policies;
  monitor::SourceRegistry sources;
  act::ActuatorRegistry actuators;
  static Result<WorkloadRegistries> Default();
};

// One workload map as the file's spec.workloads entries are read (an AIScaler's spec is turned
// into the same map): name, kind, bounds, behavior, policy, signals (each naming one of
// `sources`) and target, and its place in `pool` (null: no pool; a pool field is an error).
// Every error is recorded at its field; nullopt when any was.
std::optional<WorkloadSpec> ParseWorkloadEntry(const config::ConfigNode& w,
                                               const WorkloadRegistries& reg, double period_s,
                                               const std::vector<SourceSpec>& sources,
                                               const PoolSpec* pool = nullptr);

// Reads a parsed ControllerConfig document, header included. Every error is recorded in
// root.errors(); the result is an error when any was recorded.
Result<ControllerConfig> ParseControllerConfig(const config::ConfigNode& root);
// For `aiscale validate`.
Status ValidateControllerConfig(const config::ConfigNode& root);

}  // namespace aiscale::cli
