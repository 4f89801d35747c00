// AiScalerSync: keeps the Controller's workloads in step with the AIScaler objects a watch
// delivers, and each object's .status in step with its decisions.
//
// On the tick thread, between ticks: Apply adds a workload for a new valid object, replaces it
// when its spec or hold annotations changed (learned state is kept under the object's UID) and
// removes it when the object is deleted, leaving its target at the size it has. An object whose
// spec cannot be read, names a source that does not exist, or takes a name the config file
// already uses is not acted on: its status says why (ScalingActive=False, the field path in the
// message) and a Warning Event is posted; nothing else is affected. After each tick, AfterTick
// builds every acting object's status from its Decision and queues the ones that changed with
// the StatusWriter (core changes at once, signal values at most every metrics_interval).
// Not thread-safe: one thread (the daemon's tick thread).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "act/aiscaler_status.h"
#include "act/kubernetes_reflector.h"
#include "act/kubernetes_status_writer.h"
#include "cli/aiscaler_spec.h"
#include "control/controller.h"
#include "core/clock.h"
#include "core/telemetry.h"

namespace aiscale::cli {

struct AiScalerSyncEnv {
  AiScalerContext ctx;
  // The engine of a valid object's workload (its kubernetes target).
  std::function<Result<std::unique_ptr<Actuator>>(const WorkloadSpec&)> make_actuator;
  std::function<MetricSource*(const std::string&)> source_by_name;
  // True when the config file has a workload with this key (a name clash).
  std::function<bool(const std::string&)> file_has;
  // A problem with the target itself ("spec.min_replicas: ... above the target's own limit"),
  // or nullopt; may be empty.
  std::function<std::optional<std::string>(const ParsedAiScaler&, const WorkloadSpec&)>
      check_target;
  act::StatusWriter* writer = nullptr;  // null: statuses are built, not written
  Clock* clock = nullptr;
  Duration metrics_interval = Seconds(60);
  std::function<void(const std::string&)> log;
  Telemetry* telemetry = nullptr;
};

class AiScalerSync {
 public:
  explicit AiScalerSync(AiScalerSyncEnv env);
  ~AiScalerSync();

  // Applies watched changes to `controller`; returns how many objects changed their binding.
  size_t Apply(std::vector<act::ObjectChange> changes, control::Controller& controller);
  void AfterTick(const std::vector<Decision>& decisions);

  enum class State { kActive, kInvalid, kConflict };
  struct Object {
    ParsedAiScaler meta;  // without its workload spec (that lives in the Controller)
    State state = State::kInvalid;
    std::string problem;  // why it is not acted on
    std::unique_ptr<Actuator> actuator;
    std::optional<EngineObject> target;  // what it scales, while acting
    act::AiScalerStatus written;         // the last status queued (or read from the object)
    bool has_written = false;
    TimePoint metrics_written{};
    std::string last_scale_time;
  };
  const Object* Find(const std::string& key) const;
  size_t acting() const;
  // What the acting objects scale (namespace filled): their pods are aiscale's, not others'.
  std::vector<EngineObject> Targets() const;
  size_t objects() const { return objects_.size(); }
  // Statuses queued for writing so far (each a change worth writing).
  size_t statuses_queued() const { return statuses_queued_; }

 private:
  void Upsert(nlohmann::json object, control::Controller& c);
  void Delete(const std::string& key, control::Controller& c);
  // Makes and adds (or replaces) the binding; the problem when it cannot.
  std::optional<std::string> Bind(Object& o, const WorkloadSpec& spec, control::Controller& c);
  void NotActing(Object& o, State state, std::string problem, control::Controller& c);
  void QueueStatus(Object& o, const act::AiScalerStatus& s, bool force);
  act::StatusInput InputOf(const Object& o) const;
  void PublishConditions(const Object& o, const act::AiScalerStatus& s);
  void Log(const std::string& line) const;

  AiScalerSyncEnv env_;
  std::unordered_map<std::string, Object> objects_;
  size_t statuses_queued_ = 0;
};

}  // namespace aiscale::cli
