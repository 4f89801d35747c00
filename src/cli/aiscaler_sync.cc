#include "cli/aiscaler_sync.h"

#include "control/assembler.h"
#include "decide/pause.h"

namespace aiscale::cli {
namespace {

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

const char* StateName(AiScalerSync::State s) {
  switch (s) {
    case AiScalerSync::State::kActive:
      return "active";
    case AiScalerSync::State::kInvalid:
      return "invalid";
    case AiScalerSync::State::kConflict:
      return "conflict";
  }
  return "?";
}

}  // namespace

AiScalerSync::AiScalerSync(AiScalerSyncEnv env) : env_(std::move(env)) {
  if (env_.telemetry) {
    env_.telemetry->DeclareGauge("aiscale_aiscalers", "AIScaler objects seen, by state.");
    env_.telemetry->DeclareGauge("aiscale_aiscaler_condition",
                                 "1 for each AIScaler condition's current status (True, False, "
                                 "Unknown), else 0; by namespace, name and condition.");
  }
}

AiScalerSync::~AiScalerSync() = default;

void AiScalerSync::Log(const std::string& line) const {
  if (env_.log) env_.log(line);
}

const AiScalerSync::Object* AiScalerSync::Find(const std::string& key) const {
  const auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : &it->second;
}

size_t AiScalerSync::acting() const {
  size_t n = 0;
  for (const auto& [key, o] : objects_) n += o.state == State::kActive ? 1 : 0;
  return n;
}

std::vector<EngineObject> AiScalerSync::Targets() const {
  std::vector<EngineObject> out;
  for (const auto& [key, o] : objects_) {
    if (o.state == State::kActive && o.target) out.push_back(*o.target);
  }
  return out;
}

size_t AiScalerSync::Apply(std::vector<act::ObjectChange> changes,
                           control::Controller& controller) {
  size_t changed = 0;
  for (act::ObjectChange& ch : changes) {
    const auto it = objects_.find(ch.key);
    const std::string before = it == objects_.end() ? "" : it->second.meta.fingerprint;
    if (ch.object) {
      Upsert(std::move(*ch.object), controller);
    } else {
      Delete(ch.key, controller);
    }
    const auto now = objects_.find(ch.key);
    changed += (now == objects_.end() ? "" : now->second.meta.fingerprint) != before ? 1 : 0;
  }
  if (env_.telemetry && !changes.empty()) {
    size_t by_state[3] = {0, 0, 0};
    for (const auto& [key, o] : objects_) ++by_state[static_cast<int>(o.state)];
    for (State s : {State::kActive, State::kInvalid, State::kConflict}) {
      env_.telemetry->Set("aiscale_aiscalers", {{"state", StateName(s)}},
                          static_cast<double>(by_state[static_cast<int>(s)]));
    }
  }
  return changed;
}

void AiScalerSync::Upsert(nlohmann::json object, control::Controller& c) {
  ParsedAiScaler p = ParseAiScaler(object, env_.ctx);
  if (p.key.empty()) return;
  if (env_.writer && !p.resource_version.empty())
    env_.writer->SetVersion(p.key, p.resource_version);
  auto it = objects_.find(p.key);
  if (it != objects_.end() && it->second.meta.fingerprint == p.fingerprint) {
    it->second.meta.resource_version = p.resource_version;  // e.g. our own status write
    it->second.meta.generation = p.generation;
    return;
  }
  const bool fresh = it == objects_.end() || it->second.meta.uid != p.uid;
  Object& o = objects_[p.key];
  if (fresh) {
    // What a previous process (or a previous object of this name) wrote: kept, so an unchanged
    // status is not written again and a condition keeps its lastTransitionTime.
    const nlohmann::json status = object.value("status", nlohmann::json());
    o.written = act::AiScalerStatus::FromJson(status);
    o.has_written = status.is_object() && !status.empty();
    o.last_scale_time = o.written.last_scale_time;
  }
  std::optional<WorkloadSpec> spec = std::move(p.workload);
  p.workload.reset();
  const bool was_known = it != objects_.end();
  o.meta = std::move(p);
  if (!o.meta.errors.empty()) return NotActing(o, State::kInvalid, Join(o.meta.errors), c);
  if (env_.file_has && env_.file_has(o.meta.key)) {
    return NotActing(o, State::kConflict,
                     "the config file already has a workload named " + o.meta.key +
                         "; this AIScaler is not acted on until one of them is renamed",
                     c);
  }
  if (env_.check_target) {
    if (std::optional<std::string> e = env_.check_target(o.meta, *spec)) {
      return NotActing(o, State::kInvalid, *e, c);
    }
  }
  if (std::optional<std::string> e = Bind(o, *spec, c)) {
    return NotActing(o, State::kInvalid, *e, c);
  }
  const bool was_active = o.state == State::kActive;
  o.state = State::kActive;
  o.problem.clear();
  Log("AIScaler " + o.meta.key + (was_known && was_active ? " changed" : " managed") + ": " +
      o.meta.reference + ", policy " + spec->pipeline.name + ", " +
      std::to_string(spec->min_replicas) + ".." + std::to_string(spec->max_replicas) +
      (o.meta.pause.any() ? ", " + o.meta.pause.Summary() : ""));
  if (env_.telemetry) {
    const MetricLabels wl = {{"workload", o.meta.key}};
    env_.telemetry->Set("aiscale_workload_min_replicas", wl, spec->min_replicas);
    env_.telemetry->Set("aiscale_workload_max_replicas", wl, spec->max_replicas);
  }
}

std::optional<std::string> AiScalerSync::Bind(Object& o, const WorkloadSpec& spec,
                                              control::Controller& c) {
  Result<std::unique_ptr<Actuator>> a = env_.make_actuator(spec);
  if (!a.ok()) return "spec.scaleTargetRef: " + a.status().message();
  control::SourceLookup lookup;
  lookup.by_name = env_.source_by_name;
  Result<control::WorkloadBinding> b =
      control::Assemble(spec, spec.pipeline, lookup, a->get(), env_.ctx.pool);
  if (!b.ok()) return "spec.signals: " + b.status().message();
  b->state_key = "aiscaler/" + o.meta.uid;
  if (o.meta.pause.any()) {
    b->constraints =
        std::make_shared<const decide::PausedConstraints>(b->constraints, o.meta.pause);
    b->held = true;
  }
  const Status st =
      o.state == State::kActive ? c.Replace(std::move(b).value()) : c.Add(std::move(b).value());
  if (!st.ok()) return st.message();
  o.actuator = std::move(a).value();  // the old one (if any) is no longer referenced
  o.target = spec.TargetObject();
  return std::nullopt;
}

void AiScalerSync::NotActing(Object& o, State state, std::string problem, control::Controller& c) {
  if (o.state == State::kActive) {
    const Status st = c.Remove(o.meta.key);
    if (!st.ok()) Log("AIScaler " + o.meta.key + ": " + st.message());
    o.actuator.reset();
    o.target.reset();
  }
  const bool news = o.state != state || o.problem != problem;
  o.state = state;
  o.problem = std::move(problem);
  if (!news) return;
  const char* reason = state == State::kConflict ? "NameConflict" : "InvalidSpec";
  Log("AIScaler " + o.meta.key + " not acted on (" + reason + "): " + o.problem);
  if (env_.writer) env_.writer->QueueEvent(o.meta.key, o.meta.uid, "Warning", reason, o.problem);
  const std::string now = act::FormatKubeTime(env_.clock->WallNow());
  QueueStatus(o, act::BuildStatus(InputOf(o), o.has_written ? &o.written : nullptr, now), true);
}

void AiScalerSync::Delete(const std::string& key, control::Controller& c) {
  const auto it = objects_.find(key);
  if (it == objects_.end()) return;
  if (it->second.state == State::kActive) {
    const Status st = c.Remove(key);
    if (!st.ok()) Log("AIScaler " + key + ": " + st.message());
    Log("AIScaler " + key + " deleted: no longer managed; " + it->second.meta.reference +
        " keeps its current size");
  }
  if (env_.writer) env_.writer->Forget(key);
  if (env_.telemetry) {
    for (const char* g : {"aiscale_aiscaler_condition", "aiscale_workload_min_replicas",
                          "aiscale_workload_max_replicas"}) {
      env_.telemetry->Forget(g, "workload", key);
    }
  }
  objects_.erase(it);  // its actuator goes with it, after the Controller let go of it
}

act::StatusInput AiScalerSync::InputOf(const Object& o) const {
  act::StatusInput in;
  in.generation = o.meta.generation;
  in.reference = o.meta.reference;
  if (o.state == State::kInvalid) in.invalid = o.problem;
  if (o.state == State::kConflict) in.conflict = o.problem;
  in.hold = o.meta.pause.Summary();
  in.hold_source = o.meta.pause.source;
  in.hold_error = o.meta.pause_error;
  in.targets = o.meta.targets;
  in.last_scale_time = o.last_scale_time;
  return in;
}

void AiScalerSync::AfterTick(const std::vector<Decision>& decisions) {
  const std::string now = act::FormatKubeTime(env_.clock->WallNow());
  for (const Decision& d : decisions) {
    const auto it = objects_.find(d.workload);
    if (it == objects_.end() || it->second.state != State::kActive) continue;
    Object& o = it->second;
    if (d.action == Action::kScaled) {
      o.last_scale_time =
          act::FormatKubeTime(d.wall.time_since_epoch().count() ? d.wall : env_.clock->WallNow());
    }
    act::StatusInput in = InputOf(o);
    in.decision = &d;
    QueueStatus(o, act::BuildStatus(in, o.has_written ? &o.written : nullptr, now), false);
  }
}

void AiScalerSync::QueueStatus(Object& o, const act::AiScalerStatus& s, bool force) {
  const TimePoint now = env_.clock->Now();
  const bool core = force || !o.has_written || !s.SameCore(o.written);
  const bool metrics =
      !s.SameMetrics(o.written) && now - o.metrics_written >= env_.metrics_interval;
  if (!core && !metrics) return;
  o.written = s;
  o.has_written = true;
  o.metrics_written = now;
  ++statuses_queued_;
  if (env_.writer) env_.writer->Queue(o.meta.key, s.ToJson());
  if (core) PublishConditions(o, s);
}

void AiScalerSync::PublishConditions(const Object& o, const act::AiScalerStatus& s) {
  if (!env_.telemetry) return;
  for (const act::StatusCondition& c : s.conditions) {
    for (const char* st : {"True", "False", "Unknown"}) {
      env_.telemetry->Set("aiscale_aiscaler_condition",
                          {{"workload", o.meta.key},
                           {"namespace", o.meta.namespace_},
                           {"name", o.meta.name},
                           {"condition", c.type},
                           {"status", st}},
                          c.status == st ? 1 : 0);
    }
  }
}

}  // namespace aiscale::cli
