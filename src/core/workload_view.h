// WorkloadView and LiveView: what the daemon knows about each workload right now, as a copy
// the HTTP API can read without touching the Controller (DESIGN.md: the server reads snapshots
// and the Store, never calls a policy).
//
// Contract: LiveView implementations return copies taken under their own lock, so a reader
// never sees a half-written tick. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/decision.h"
#include "core/scale.h"
#include "core/steering.h"
#include "core/workload_signals.h"

namespace aiscale {

struct SignalView {
  std::string name;
  std::string source;  // the MetricSource's name
  SignalStatus status = SignalStatus::kMissing;
  double value = 0;  // mean over instances when ok
  double sum = 0;
  int instances = 0;
  double age_s = -1;  // seconds since the newest valid measurement; -1 when none
  std::string detail;
};

// One point of a workload's recent scale, for the dashboard's sparklines.
struct ScalePoint {
  double wall_s = 0;  // Unix seconds of the tick
  int desired = 0;
  int ready = 0;
};

struct WorkloadView {
  WorkloadRef ref;
  std::string policy;
  std::string engine;  // the actuator's name ("local", "kubernetes", "slurm", "sim")
  int current = 0;
  int ready = 0;
  int desired = 0;  // what the last decision asked for
  std::optional<Decision> last;
  std::vector<SignalView> signals;
  int min_replicas = 0;
  int max_replicas = 0;
  Steering steering;  // an operator's override; mode kNone when none is in force
  // Recent ticks where desired or ready changed, oldest first, and the last tick (bounded:
  // LiveBoard keeps kHistoryPoints).
  std::vector<ScalePoint> history;
  double rule_since_s = 0;  // Unix seconds since the last decision's rule has been the rule
};

// The shared GPU pool as the last tick allocated it (docs/pool.md); per tenant in pool order.
struct TenantView {
  std::string name;
  int64_t guaranteed = 0;
  std::optional<int64_t> borrow_limit;
  double weight = 1;
  int64_t wanted = 0;    // GPUs its workloads asked for
  int64_t granted = 0;   // GPUs granted
  int64_t borrowed = 0;  // beyond its guarantee
};

struct PoolView {
  bool known = false;  // the engine said how big the pool is
  int64_t gpus = 0;
  int64_t granted = 0;
  int64_t reclaimed = 0;  // GPUs taken back in the last tick
  std::string detail;     // where the size came from, or why it is unknown
  std::vector<TenantView> tenants;
};

class LiveView {
 public:
  virtual ~LiveView() = default;
  virtual std::vector<WorkloadView> Workloads() const = 0;
  // By Key() (namespace/name or name); nullopt when unknown.
  virtual std::optional<WorkloadView> Workload(const std::string& key) const = 0;
  // True once the first tick has completed (/readyz).
  virtual bool Ready() const = 0;
  // The shared pool after the last tick; nullopt when the daemon runs no pool.
  virtual std::optional<PoolView> Pool() const { return std::nullopt; }
};

}  // namespace aiscale
