#include "cli/controller_config.h"

#include <set>

namespace aiscale::cli {
namespace {

using config::Above;
using config::ConfigNode;

std::vector<SignalConfig> ParseSignals(const ConfigNode& w) {
  std::vector<SignalConfig> out;
  std::set<std::string> seen;
  for (const ConfigNode& s : w.Child("signals").Items()) {
    if (!s.IsMap()) {
      s.Error("must be a map with name, source, query");
      continue;
    }
    s.CheckKnown({"name", "source", "query"});
    SignalConfig c;
    c.name = s.RequiredString("name");
    if (s.Has("source")) {
      c.source = s.Enum("source", KnownSources().front(), KnownSources());
    } else {
      s.Error("missing required field 'source'");
    }
    c.query = s.String("query", "");
    if (!c.name.empty() && !seen.insert(c.name).second) {
      s.ErrorAt("name", "signal '" + c.name + "' is bound twice");
    }
    out.push_back(std::move(c));
  }
  return out;
}

void ParseWorkload(const ConfigNode& w, const decide::PolicyRegistry& registry, double period_s,
                   std::set<std::string>& keys, ControllerConfig& cfg) {
  if (!w.IsMap()) {
    w.Error("must be a map with name, kind, policy, ...");
    return;
  }
  w.CheckKnown({"name", "kind", "namespace", "min_replicas", "max_replicas", "granularity",
                "scale_to_zero", "behavior", "policy", "signals", "staleness", "cold_start"});
  ControllerWorkload out;
  out.ref.name = w.RequiredString("name");
  out.ref.kind = w.RequiredString("kind");
  out.ref.namespace_ = w.String("namespace", "");
  if (!out.ref.name.empty() && !keys.insert(out.ref.Key()).second) {
    w.ErrorAt("name", "workload '" + out.ref.Key() + "' is listed twice");
  }
  // DESIGN.md: stale means older than 3 scrape intervals unless configured.
  out.staleness_s = w.DurationSeconds("staleness", 3 * period_s, Above(0));
  out.cold_start_s = w.DurationSeconds("cold_start", 0, config::AtLeast(0));
  out.signals = ParseSignals(w);
  if (!w.Has("policy")) {
    w.Error("missing required field 'policy'");
    return;
  }
  const ConfigNode policy = w.Child("policy");
  if (!policy.IsMap()) {
    w.ErrorAt("policy", "must be a map with a name, e.g. {name: static, replicas: 2}");
    return;
  }
  auto pipeline = decide::BuildPipeline(registry, w, policy, period_s, out.cold_start_s);
  if (!pipeline.ok()) return;  // its config errors are recorded
  // As Controller::Add will insist: every signal the policy reads has a binding.
  std::set<std::string> bound;
  for (const auto& s : out.signals) bound.insert(s.name);
  for (const auto& s : pipeline->policy->Signals()) {
    if (bound.count(s)) continue;
    const std::string msg = "policy " + std::string(pipeline->policy->Name()) + " reads " + s +
                            " but no signal entry binds it";
    if (w.Has("signals")) {
      w.ErrorAt("signals", msg);
    } else {
      w.Error(msg + " (add a signals list)");
    }
  }
  out.pipeline = std::move(pipeline).value();
  cfg.workloads.push_back(std::move(out));
}

}  // namespace

const std::vector<std::string>& KnownSources() {
  static const std::vector<std::string> kSources = {"prometheus", "scrape", "push"};
  return kSources;
}

Result<ControllerConfig> ParseControllerConfig(const ConfigNode& root,
                                               const decide::PolicyRegistry& registry) {
  const size_t before = root.errors()->size();
  ControllerConfig cfg;
  auto failed = [&]() -> Result<ControllerConfig> {
    return Status::Error("controller config has " + std::to_string(root.errors()->size() - before) +
                         " error(s)");
  };
  if (!root.IsDefined()) {
    if (root.errors()->size() == before) root.Error("empty document");
    return failed();
  }
  config::CheckHeader(root, {"ControllerConfig"});
  root.CheckKnown({"apiVersion", "kind", "metadata", "spec"});
  if (!root.Has("spec")) {
    root.Error("missing required field 'spec'");
    return failed();
  }
  const ConfigNode spec = root.Child("spec");
  spec.CheckKnown({"period", "store", "workloads"});
  cfg.period_s = spec.DurationSeconds("period", cfg.period_s, Above(0));
  cfg.store_path = spec.String("store", "");
  if (!spec.Has("workloads")) {
    spec.Error("missing required field 'workloads'");
  } else if (spec.Child("workloads").IsSequence() && spec.Child("workloads").Items().empty()) {
    spec.ErrorAt("workloads", "must list at least one workload");
  }
  std::set<std::string> keys;
  for (const ConfigNode& w : spec.Child("workloads").Items()) {
    ParseWorkload(w, registry, cfg.period_s, keys, cfg);
  }
  if (root.errors()->size() > before) return failed();
  return cfg;
}

Status ValidateControllerConfig(const ConfigNode& root) {
  auto registry = decide::PolicyRegistry::Default();
  if (!registry.ok()) return registry.status();
  auto cfg = ParseControllerConfig(root, *registry);
  return cfg.ok() ? Status::Ok() : cfg.status();
}

}  // namespace aiscale::cli
