// AiScalerWatch: `aiscale run`'s AIScaler machinery in one piece: a KubeReflector per watched
// namespace (or one cluster-wide) on its own thread, the StatusWriter on its own thread, and
// the AiScalerSync that the daemon's tick thread drives.
//
// Lifecycle: Make (resolves the connection: an unreadable kubeconfig is an error before
// anything starts), Start, then on the tick thread Apply between ticks and AfterTick after
// each; Stop joins every thread (within about a second). The Controller must outlive it
// being driven, and it must outlive the Controller's use of the actuators it made.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "act/kubernetes_auth.h"
#include "act/kubernetes_client.h"
#include "act/kubernetes_reflector.h"
#include "act/kubernetes_status_writer.h"
#include "cli/aiscaler_sync.h"
#include "cli/controller_config.h"
#include "control/controller.h"
#include "core/spec.h"

namespace aiscale::cli {

struct AiScalerWatchEnv {
  const ControllerConfig* config = nullptr;
  const WorkloadRegistries* registries = nullptr;
  BuildEnv build;  // clock, http, run_dir: what the targets' actuators are made with
  std::function<MetricSource*(const std::string&)> source_by_name;
  std::function<bool()> may_write;  // the leader, and not a dry run
  std::function<void(const std::string&)> log;
  Telemetry* telemetry = nullptr;
  act::ReflectorOptions reflector;  // tests shorten its timings
  act::KubeAuthEnv auth_env = act::KubeAuthEnv::Process();
  // Told the whole set of objects the AIScalers scale, once every watch has listed and then after
  // each change (the pool from Kubernetes counts their pods as aiscale's); may be empty.
  std::function<void(std::vector<EngineObject>)> on_targets;
};

class AiScalerWatch {
 public:
  static Result<std::unique_ptr<AiScalerWatch>> Make(AiScalerWatchEnv env);
  ~AiScalerWatch();

  void Start();
  void Stop();
  // Waits up to `limit` until every watch has listed once (the first tick then sees every
  // object); false when one has not.
  bool AwaitSynced(Duration limit);
  bool Synced() const;
  // The tick thread: applies what the watches saw since the last call.
  size_t Apply(control::Controller& controller);
  void AfterTick(const std::vector<Decision>& decisions) { sync_->AfterTick(decisions); }
  const AiScalerSync& sync() const { return *sync_; }

 private:
  explicit AiScalerWatch(AiScalerWatchEnv env) : env_(std::move(env)) {}
  std::optional<std::string> CheckTarget(const ParsedAiScaler& p, const WorkloadSpec& spec);

  AiScalerWatchEnv env_;
  std::unique_ptr<act::KubeClient> client_;
  std::vector<std::unique_ptr<act::KubeReflector>> reflectors_;
  std::unique_ptr<act::StatusWriter> writer_;
  std::unique_ptr<AiScalerSync> sync_;
  std::vector<std::thread> threads_;
  bool targets_told_ = false;
};

}  // namespace aiscale::cli
