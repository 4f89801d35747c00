// WorkloadView and LiveView: what the daemon knows about each workload right now, as a copy
// the HTTP API can read without touching the Controller (DESIGN.md: the server reads snapshots
// and the Store, never calls a policy).
//
// Contract: LiveView implementations return copies taken under their own lock, so a reader
// never sees a half-written tick. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/decision.h"
#include "core/scale.h"
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

struct WorkloadView {
  WorkloadRef ref;
  std::string policy;
  std::string engine;  // the actuator's name ("local", "kubernetes", "slurm", "sim")
  int current = 0;
  int ready = 0;
  int desired = 0;  // what the last decision asked for
  // "running", or "completed" once the engine reports the work done (ScaleState::completed).
  std::string state = "running";
  std::optional<Decision> last;
  std::vector<SignalView> signals;
};

class LiveView {
 public:
  virtual ~LiveView() = default;
  virtual std::vector<WorkloadView> Workloads() const = 0;
  // By Key() (namespace/name or name); nullopt when unknown.
  virtual std::optional<WorkloadView> Workload(const std::string& key) const = 0;
  // True once the first tick has completed (/readyz).
  virtual bool Ready() const = 0;
};

}  // namespace aiscale
