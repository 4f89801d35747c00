// Daemon: `aiscale run` wired together: the parsed ControllerConfig's sources, actuators and
// workloads around the real Controller, a wall-anchored SystemClock, a thread pool for signal
// fetches, the SQLite store and the HTTP server.
//
// Lifecycle: Build() makes everything and fails with a clear error (a port in use, a command
// that does not exist, a store that cannot be opened) before anything ticks; Run() collects on
// its own thread and ticks every period until RequestStop(), then finishes the tick in flight,
// stops the server, stops the replicas the daemon started (local processes), and closes the
// store. RequestStop is safe to call from any thread; everything else from one.
//
// With leader_election on, a Lease elector steps on its own thread and only the leader applies:
// a follower collects, decides and serves the read API, its Decisions saying "not leader
// (leader: X)". The leader releases the Lease after its last tick on a clean stop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "act/kubernetes_lease.h"
#include "act/managed_objects.h"
#include "cli/aiscaler_watch.h"
#include "cli/config_reload.h"
#include "cli/controller_config.h"
#include "control/controller.h"
#include "control/executor.h"
#include "control/live_board.h"
#include "control/steering_board.h"
#include "core/curl_http_client.h"
#include "core/gpu_slots.h"
#include "core/system_clock.h"
#include "core/telemetry.h"
#include "decide/allocator.h"
#include "server/api_server.h"
#include "server/steering_handlers.h"
#include "store/store_lock.h"

namespace aiscale::cli {

struct DaemonOptions {
  bool dry_run = false;
  bool once = false;  // wait for ready replicas (ready_wait), one collection, one tick
  // With `once`: how long to wait for every engine to report its replicas ready first (the
  // local engine starts them, and one that does not listen yet reads as missing data).
  Duration ready_wait = Seconds(10);
  bool verbose = false;  // log every decision, not only changes and problems
  // Stop cleanly once every workload's engine reports it completed and none of its replicas
  // still runs (batch use).
  bool exit_when_done = false;
};

class Daemon {
 public:
  static Result<std::unique_ptr<Daemon>> Build(ControllerConfig cfg, DaemonOptions opt,
                                               std::ostream& log);
  ~Daemon();
  // Ticks until RequestStop (or once); returns when everything is stopped.
  Status Run();
  void RequestStop();
  // Re-reads the config file before the next tick (SIGHUP): see cli/config_reload.h. A file
  // with errors, or one that changes what needs a restart, is rejected and logged with why;
  // the running config stays. Safe to call from any thread.
  void RequestReload() { reload_ = true; }
  int server_port() const { return server_ ? server_->port() : 0; }

 private:
  Daemon(ControllerConfig cfg, DaemonOptions opt, std::ostream& log);
  Status OpenStore();
  Status MakeActuators();
  Status MakeSources();
  Status AddWorkloads();
  // With `aiscalers:` set: the watches, the status writer and the sync (cli/aiscaler_watch.h).
  Status MakeAiScalers();
  // The pool's size source (a configured number, or the engine's report).
  Status MakePoolSource();
  Status MakeKubernetesPoolSource();
  // The local engine's GPU slots (gpu_slots_), when the pool has a size and a local workload.
  Status MakeGpuSlots();
  void PublishBounds();
  Status StartServer();
  Status MakeElector();
  // Steps the elector every retry period and mirrors its verdict into the Controller.
  void ElectLoop();
  // Tells the Controller whether it may apply (IsLeader now), logs a change. Thread-safe.
  void SyncLeader();
  void ReleaseLease();
  int InitialReplicas(const WorkloadSpec& w) const;
  void CollectLoop();
  // Waits up to `limit` for the fetches in flight, so the first tick sees data.
  void AwaitFirstFetches(Duration limit);
  // One tick; true when every workload's engine reports it completed, with no replica left.
  bool TickOnce();
  void AwaitReady(Duration limit);
  void ShutdownEngines();
  // Waits for the next tick, doing any reload asked for meanwhile; false on stop.
  bool WaitForTick(TimePoint next);
  void Reload();  // daemon_reload.cc
  void Shutdown();
  bool WaitUntil(TimePoint t);  // false when a stop was requested first

  ControllerConfig cfg_;
  DaemonOptions opt_;
  std::ostream& log_;
  std::mutex log_mu_;  // the AIScaler threads' lines
  SystemClock clock_;
  CurlHttpClient http_;
  Telemetry telemetry_;
  control::LiveBoard board_;
  std::unique_ptr<store::StoreLock> store_lock_;  // held while store_ is open (declared first)
  std::unique_ptr<Store> store_;
  std::map<std::string, std::unique_ptr<Actuator>> actuators_;    // by workload key
  std::map<std::string, std::unique_ptr<MetricSource>> sources_;  // by name
  std::unique_ptr<control::ThreadPoolExecutor> executor_;
  // Before controller_, so it is destroyed after it: the Controller holds its actuators.
  std::unique_ptr<WorkloadRegistries> registries_;
  std::unique_ptr<AiScalerWatch> aiscalers_;
  std::unique_ptr<PoolSource> pool_source_;  // null: no pool
  // On Kubernetes, the objects whose pods are aiscale's (the AIScalers' join as they are listed).
  std::shared_ptr<act::ManagedObjects> managed_;
  std::shared_ptr<GpuSlots> gpu_slots_;  // null: no local workload in a pool of a size
  // The most GPU slots a local pool may have: one machine's GPUs, with room to spare.
  static constexpr int64_t kMaxLocalGpuSlots = 1024;
  decide::Allocator allocator_;
  std::unique_ptr<control::Controller> controller_;
  std::unique_ptr<server::ApiServer> server_;
  std::unique_ptr<control::SteeringBoard> steering_;  // overrides set through the API
  server::TokenGate gate_;                            // the steering endpoints' token
  std::optional<RestartParts> running_parts_;         // of the file as last loaded, for reloads
  std::atomic<bool> reload_{false};
  std::unique_ptr<act::LeaseElector> elector_;  // null: leader election off, always applies
  std::mutex leader_mu_;                        // guards was_leader_ and logged_error_
  bool was_leader_ = false;
  std::string logged_error_;  // the elector's last error as last logged

  std::set<std::string> completed_;  // workloads whose completion was logged

  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
  bool shut_down_ = false;
};

}  // namespace aiscale::cli
