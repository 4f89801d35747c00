#include "cli/controller_config.h"

#include <filesystem>
#include <functional>
#include <set>

#include "act/actuator_registry.h"
#include "cli/api_token.h"
#include "decide/pipeline.h"
#include "decide/policy_registry.h"
#include "decide/pool_config.h"
#include "monitor/source_registry.h"

namespace aiscale::cli {
namespace {

using config::Above;
using config::ConfigNode;

using Registries = WorkloadRegistries;

std::string Names(const std::vector<SourceSpec>& sources) {
  std::string out;
  for (const auto& s : sources) out += (out.empty() ? "" : ", ") + s.name;
  return out.empty() ? "none defined in spec.sources" : out;
}

std::vector<SignalSpec> ParseSignals(const ConfigNode& w, const std::vector<SourceSpec>& sources) {
  std::vector<SignalSpec> out;
  std::set<std::string> seen;
  for (const ConfigNode& s : w.Child("signals").Items()) {
    if (!s.IsMap()) {
      s.Error("must be a map with name, source, query");
      continue;
    }
    s.CheckKnown({"name", "source", "query", "interval", "timeout"});
    SignalSpec c;
    c.name = s.RequiredString("name");
    c.source = s.RequiredString("source");
    c.query = s.String("query", "");
    c.interval = Seconds(s.DurationSeconds("interval", 0, config::Between(0, 86400)));
    c.timeout = Seconds(s.DurationSeconds("timeout", 0, config::Between(0, 3600)));
    const bool known = std::any_of(sources.begin(), sources.end(),
                                   [&](const SourceSpec& src) { return src.name == c.source; });
    if (!c.source.empty() && !known) {
      s.ErrorAt("source", "no source named '" + c.source + "' (defined: " + Names(sources) + ")");
    }
    if (!c.name.empty() && !seen.insert(c.name).second) {
      s.ErrorAt("name", "signal '" + c.name + "' is bound twice");
    }
    out.push_back(std::move(c));
  }
  return out;
}

// As Controller::Add and Assemble will insist: every signal the policy reads has a binding.
void CheckBound(const ConfigNode& w, const WorkloadSpec& spec) {
  std::set<std::string> bound;
  for (const auto& s : spec.signals) bound.insert(s.name);
  for (const auto& s : spec.pipeline.policy->Signals()) {
    if (bound.count(s)) continue;
    const std::string msg = "policy " + std::string(spec.pipeline.policy->Name()) + " reads " + s +
                            " but no signal entry binds it";
    if (w.Has("signals")) {
      w.ErrorAt("signals", msg);
    } else {
      w.Error(msg + " (add a signals list)");
    }
  }
}

// `named` is called once the name is read (the file checks it is not listed twice).
std::optional<WorkloadSpec> ReadEntry(const ConfigNode& w, const Registries& reg, double period_s,
                                      const std::vector<SourceSpec>& sources, const PoolSpec* pool,
                                      const std::function<void(const WorkloadSpec&)>& named) {
  std::vector<std::string> known = decide::CommonWorkloadFields();
  known.insert(known.end(), {"signals", "target"});
  known.insert(known.end(), decide::PoolWorkloadFields().begin(),
               decide::PoolWorkloadFields().end());
  w.CheckKnown(known);
  WorkloadSpec spec = decide::ReadWorkloadFields(w, period_s);
  decide::ReadPoolMembership(w, pool, spec);
  if (named) named(spec);
  spec.signals = ParseSignals(w, sources);
  if (w.Has("target")) {
    auto target = reg.actuators.Parse(w.Child("target"));
    if (target.ok()) spec.target = std::move(target).value();
  }
  if (!w.Has("policy")) {
    w.Error("missing required field 'policy'");
    return std::nullopt;
  }
  const ConfigNode policy = w.Child("policy");
  if (!policy.IsMap()) {
    w.ErrorAt("policy", "must be a map with a name, e.g. {name: static, replicas: 2}");
    return std::nullopt;
  }
  auto pipeline = decide::BuildPipeline(reg.policies, w, policy, period_s, spec.cold_start_s);
  if (!pipeline.ok()) return std::nullopt;  // its config errors are recorded
  spec.pipeline = std::move(pipeline).value();
  CheckBound(w, spec);
  return spec;
}

void ParseWorkload(const ConfigNode& w, const Registries& reg, ControllerConfig& cfg,
                   std::set<std::string>& keys) {
  if (!w.IsMap()) {
    w.Error("must be a map with name, kind, policy, ...");
    return;
  }
  std::optional<WorkloadSpec> spec =
      ReadEntry(w, reg, cfg.period_s, cfg.sources, cfg.pool ? &*cfg.pool : nullptr,
                [&](const WorkloadSpec& s) {
                  if (!s.ref.name.empty() && !keys.insert(s.ref.Key()).second) {
                    w.ErrorAt("name", "workload '" + s.ref.Key() + "' is listed twice");
                  }
                });
  if (spec) cfg.workloads.push_back(std::move(*spec));
}

void ParseSources(const ConfigNode& spec, const Registries& reg, ControllerConfig& cfg) {
  std::set<std::string> names;
  for (const ConfigNode& s : spec.Child("sources").Items()) {
    if (!s.IsMap()) {
      s.Error("must be a map with name, type, ...");
      continue;
    }
    const std::string name = s.RequiredString("name");
    if (!name.empty() && !names.insert(name).second) {
      s.ErrorAt("name", "source '" + name + "' is defined twice");
    }
    auto src = reg.sources.Parse(s);
    if (src.ok()) cfg.sources.push_back(std::move(src).value());
  }
}

// Relative paths in the file are relative to the file's own directory.
std::string Resolve(const std::string& path, const std::string& file) {
  if (path.empty() || file.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(file).parent_path() / path).lexically_normal().string();
}

void ParseServer(const ConfigNode& spec, ControllerConfig& cfg) {
  const ConfigNode s = spec.Child("server");
  if (!s.IsDefined()) return;
  s.CheckKnown({"enabled", "host", "port", "token", "token_file"});
  cfg.server.enabled = s.Bool("enabled", cfg.server.enabled);
  cfg.server.host = s.String("host", cfg.server.host);
  cfg.server.port = s.Int("port", cfg.server.port, config::Between(0, 65535));
  if (s.Has("token") && s.Has("token_file")) {
    s.ErrorAt("token", "give token or token_file, not both");
    return;
  }
  if (s.Has("token_file")) {
    cfg.server.token_file = Resolve(s.String("token_file", ""), cfg.file);
    auto t = ReadTokenFile(cfg.server.token_file);
    if (!t.ok()) {
      s.ErrorAt("token_file", t.status().message());
    } else {
      cfg.server.token = std::move(t).value();
    }
  } else if (s.Has("token")) {
    cfg.server.token = s.String("token", "");
  }
  if (const Status st = CheckToken(cfg.server.token); !st.ok()) {
    s.ErrorAt(s.Has("token") ? "token" : "token_file", st.message());
    cfg.server.token.clear();
  }
}

// `store:` is the file's path, or a map:
//   store: {path: FILE, heartbeat: 5m, retention: 7d, sync: normal, snapshot_ticks: 40,
//           cache_mib: 64, state_every_ticks: 1}
// heartbeat: a decision is stored when it changed, and otherwise once per heartbeat saying how
// many unchanged ticks it stands for (0 stores every tick); retention: decisions older than it
// are deleted, a bounded batch per tick (0 keeps them); sync: full fsyncs every commit, normal
// lets a power cut lose the last commits (WAL keeps the file consistent either way);
// snapshot_ticks: a changing policy state is written in full at least this often and as deltas
// between (a restart replays at most about twice this many ticks); cache_mib: SQLite's page
// cache (0: SQLite's default of about 2 MB); state_every_ticks: each policy state is written
// once per this many ticks (and at once when its workload scales, and on a clean stop), so a
// crash loses at most that many ticks of learning (1: every tick).
void ParseStore(const ConfigNode& spec, ControllerConfig& cfg) {
  const ConfigNode s = spec.Child("store");
  if (!s.IsMap()) {
    cfg.store_path = Resolve(spec.String("store", ""), cfg.file);
    return;
  }
  s.CheckKnown({"path", "heartbeat", "retention", "sync", "snapshot_ticks", "cache_mib",
                "state_every_ticks"});
  cfg.store_path = Resolve(s.RequiredString("path"), cfg.file);
  store::StoreOptions& o = cfg.store_options;
  o.heartbeat =
      Seconds(s.DurationSeconds("heartbeat", ToSeconds(o.heartbeat), config::Between(0, 86400)));
  o.retention = Seconds(s.DurationSeconds("retention", 0, config::Between(0, 3650 * 86400.0)));
  o.sync_every_commit = s.Enum("sync", "full", {"full", "normal"}) == "full";
  o.state_snapshot_ticks =
      s.Int("snapshot_ticks", o.state_snapshot_ticks, config::Between(1, 100000));
  o.state_every_ticks = s.Int("state_every_ticks", o.state_every_ticks, config::Between(1, 10000));
  o.cache_kib = 1024 * s.Int("cache_mib", o.cache_kib / 1024, config::Between(0, 65536));
}

void ParseSpec(const ConfigNode& spec, const Registries& reg, ControllerConfig& cfg) {
  spec.CheckKnown({"period", "store", "run_dir", "server", "sources", "workloads",
                   "leader_election", "aiscalers", "pool"});
  // At least 100 ms (docs/limits.md): a 1 us period ran 49,000 ticks a second at 100% CPU, and
  // no engine or metric store answers faster than that anyway.
  cfg.period_s = spec.DurationSeconds("period", cfg.period_s, config::AtLeast(kMinPeriodS));
  ParseStore(spec, cfg);
  cfg.run_dir = Resolve(spec.String("run_dir", ""), cfg.file);
  if (cfg.run_dir.empty() && !cfg.store_path.empty()) cfg.run_dir = cfg.store_path + ".run";
  ParseServer(spec, cfg);
  if (spec.Has("leader_election")) {
    cfg.leader_election = act::LeaderElectionConfig::Parse(spec.Child("leader_election"));
  }
  ParseSources(spec, reg, cfg);
  if (spec.Has("pool")) cfg.pool = decide::ParsePool(spec.Child("pool"));
  if (cfg.pool && cfg.pool->from == "kubernetes") {
    const config::ConfigNode k = spec.Child("pool").Child("kubernetes");
    cfg.pool_kube_auth = act::ParseKubeAuth(k);
    cfg.pool_kube_timeout = Seconds(k.DurationSeconds("timeout", 10, config::Above(0)));
  }
  if (spec.Has("aiscalers")) cfg.aiscalers = AiScalerWatchConfig::Parse(spec.Child("aiscalers"));
  if (!spec.Has("workloads")) {
    // With AIScalers watched, the file may name no workload of its own.
    if (!cfg.aiscalers.enabled) spec.Error("missing required field 'workloads'");
  } else if (spec.Child("workloads").IsSequence() && spec.Child("workloads").Items().empty()) {
    spec.ErrorAt("workloads", "must list at least one workload");
  }
  std::set<std::string> keys;
  for (const ConfigNode& w : spec.Child("workloads").Items()) ParseWorkload(w, reg, cfg, keys);
}

}  // namespace

Result<WorkloadRegistries> WorkloadRegistries::Default() {
  ASSIGN_OR_RETURN(auto policies, decide::PolicyRegistry::Default());
  ASSIGN_OR_RETURN(auto sources, monitor::DefaultSourceRegistry());
  ASSIGN_OR_RETURN(auto actuators, act::DefaultActuatorRegistry());
  return WorkloadRegistries{std::move(policies), std::move(sources), std::move(actuators)};
}

std::optional<WorkloadSpec> ParseWorkloadEntry(const ConfigNode& w, const WorkloadRegistries& reg,
                                               double period_s,
                                               const std::vector<SourceSpec>& sources,
                                               const PoolSpec* pool) {
  const size_t before = w.errors()->size();
  if (!w.IsMap()) {
    w.Error("must be a map with name, kind, policy, ...");
    return std::nullopt;
  }
  std::optional<WorkloadSpec> spec = ReadEntry(w, reg, period_s, sources, pool, nullptr);
  if (w.errors()->size() > before) return std::nullopt;
  return spec;
}

Result<ControllerConfig> ParseControllerConfig(const ConfigNode& root) {
  const size_t before = root.errors()->size();
  ControllerConfig cfg;
  cfg.file = root.file();
  auto failed = [&]() -> Result<ControllerConfig> {
    return Status::Invalid("controller config has " +
                           std::to_string(root.errors()->size() - before) + " error(s)");
  };
  if (!root.IsDefined()) {
    if (root.errors()->size() == before) root.Error("empty document");
    return failed();
  }
  auto reg = WorkloadRegistries::Default();
  if (!reg.ok()) return reg.status();
  config::CheckHeader(root, {"ControllerConfig"});
  root.CheckKnown({"apiVersion", "kind", "metadata", "spec"});
  if (!root.Has("spec")) {
    root.Error("missing required field 'spec'");
    return failed();
  }
  ParseSpec(root.Child("spec"), *reg, cfg);
  if (root.errors()->size() > before) return failed();
  return cfg;
}

Status ValidateControllerConfig(const ConfigNode& root) {
  auto cfg = ParseControllerConfig(root);
  return cfg.ok() ? Status::Ok() : cfg.status();
}

}  // namespace aiscale::cli
