// Typed specs: a workload's configuration after it was parsed and validated once, shared by the
// simulator's Scenario and the daemon's ControllerConfig (docs/architecture.md "Live mode").
//
// Why: after parsing nothing reads YAML again. A PolicySpec holds the built, immutable policy,
// stabilizer and constraints (all three are pure and keep their state in PersistentState, so
// one instance serves every run and every restart). SourceSpec and TargetSpec hold factories
// that captured their parsed, typed config: making the real source or actuator cannot fail on
// config, only on the environment (a port in use, a missing binary). Copies share the built
// objects; all of them are immutable, so specs may be read from any thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/actuator.h"
#include "core/clock.h"
#include "core/gpu_slots.h"
#include "core/http.h"
#include "core/metric_source.h"
#include "core/policy.h"
#include "core/pool.h"
#include "core/result.h"
#include "core/scale.h"

namespace aiscale {

// The decide part of a workload: what size is right, how fast to get there, what is allowed.
struct PolicySpec {
  std::string name;                                // the policy's registry name
  std::shared_ptr<const Policy> policy;            // never null in a parsed spec
  std::shared_ptr<const Stabilizer> stabilizer;    // null: pass-through
  std::shared_ptr<const Constrainer> constraints;  // null: none
};

// One signal of a live workload and where it comes from.
struct SignalSpec {
  std::string name;     // canonical signal name
  std::string source;   // a SourceSpec's name
  std::string query;    // source-specific (PromQL, metric selector); may be empty
  Duration interval{};  // how often to fetch; zero: the controller's period
  Duration timeout{};   // the fetch's deadline; zero: the source's own
};

// What a source or actuator factory may use from the daemon that builds it.
struct BuildEnv {
  Clock* clock = nullptr;
  HttpClient* http = nullptr;
  // Where a workload's replicas are (the workload's actuator), for sources that scrape them.
  std::function<Result<std::vector<ReplicaEndpoint>>(const WorkloadRef&)> endpoints;
  std::string run_dir;  // a writable directory for the daemon's own files (pid records)
  // The local engine's GPU slots, shared by every local workload of the daemon (the pool's
  // `size`); null when the config has no pool of a given size. The daemon owns it.
  std::shared_ptr<GpuSlots> gpu_slots;
  // The GPU slots one replica of the workload being built takes (its pool `gpus_per_replica`);
  // 0 when the workload is not in a pool.
  int gpus_per_replica = 0;
};

struct SourceSpec {
  std::string name;  // what SignalSpec::source refers to
  std::string type;  // the registry entry ("prometheus", "scrape")
  std::function<Result<std::unique_ptr<MetricSource>>(const BuildEnv&)> make;
};

// The object an engine scales, where it has one (kubernetes: a Deployment, StatefulSet or
// PyTorchJob): the shared pool tells the GPUs of its pods from those of pods it does not manage.
// Empty namespace or name: the workload's own (namespace "default" when it has none).
struct EngineObject {
  std::string namespace_;
  std::string kind;
  std::string name;
  // "group/version" of its API ("apps/v1"): a Kubernetes owner reference names it with the
  // kind, and a custom resource named by `resource:` alone has no kind to match by.
  std::string api_version = {};
};

struct TargetSpec {
  std::string engine;  // the registry entry ("local", "kubernetes", "slurm")
  // `initial_replicas`: the size to hold until the first decision (an engine that starts the
  // replicas itself, like local processes, starts this many).
  std::function<Result<std::unique_ptr<Actuator>>(const WorkloadRef& ref, int initial_replicas,
                                                  const BuildEnv& env)>
      make;
  std::optional<EngineObject> object;  // kubernetes only
};

struct WorkloadSpec {
  WorkloadRef ref;
  int min_replicas = 1;
  int max_replicas = 100;
  int granularity = 1;
  double staleness_s = 45;  // default: 3 collection intervals
  double cold_start_s = 0;  // provisioning + model load, or restart cost
  PolicySpec pipeline;
  std::vector<SignalSpec> signals;   // live only; the simulator binds every signal to itself
  std::optional<TargetSpec> target;  // live only
  PoolMembership pool;               // read only when the file has a `pool:` section

  // The engine object the target scales, its namespace and name defaulted from the workload
  // (WorkloadRef::ObjectNamespace/ObjectName); nullopt when the target is not an object.
  std::optional<EngineObject> TargetObject() const {
    if (!target || !target->object) return std::nullopt;
    EngineObject o = *target->object;
    o.namespace_ = ref.ObjectNamespace(o.namespace_);
    o.name = ref.ObjectName(o.name);
    return o;
  }
};

}  // namespace aiscale
