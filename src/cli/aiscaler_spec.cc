#include "cli/aiscaler_spec.h"

#include <cstdio>
#include <set>

#include "act/kubernetes_target.h"
#include "core/config/config_node.h"

namespace aiscale::cli {
namespace {

using nlohmann::json;

std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// "3", "0.75": a target as a person writes it.
std::string NumberText(const json& v) {
  if (!v.is_number()) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v.get<double>());
  return buf;
}

json AuthJson(const act::KubeAuthConfig& a) {
  json out = json::object();
  if (a.mode == act::KubeAuthConfig::Mode::kInCluster) return json{{"in_cluster", true}};
  if (a.mode == act::KubeAuthConfig::Mode::kKubeconfig) out["kubeconfig"] = a.kubeconfig;
  if (!a.context.empty()) out["context"] = a.context;
  return out;
}

// An error path of the synthesized workload map, as the object's path.
std::string ObjectPath(const std::string& path) {
  const auto starts = [&](const std::string& p) {
    return path == p || path.rfind(p + ".", 0) == 0 || path.rfind(p + "[", 0) == 0;
  };
  if (starts("spec.target")) return "spec.scaleTargetRef";
  if (starts("spec.name")) return "metadata.name";
  if (starts("spec.namespace")) return "metadata.namespace";
  return path;
}

// The kubernetes target of `ref`, as a config file would write it; problems go to `errors`.
json TargetOf(const json& ref, const std::string& ns, const AiScalerContext& ctx,
              std::vector<std::string>& errors) {
  const std::string kind = StringAt(ref, "kind");
  const std::string api = StringAt(ref, "apiVersion");
  for (const auto& [k, v] : ref.items()) {
    static const std::set<std::string> kKnown = {"apiVersion", "kind",       "name",
                                                 "resource",   "ready_path", "gpu_capacity"};
    if (!kKnown.count(k)) {
      errors.push_back("spec.scaleTargetRef." + k +
                       ": unknown field (known: apiVersion, kind, name, resource, ready_path, "
                       "gpu_capacity)");
    }
  }
  json t = {{"engine", "kubernetes"},
            {"kind", kind},
            {"name", StringAt(ref, "name")},
            {"namespace", ns},
            {"auth", AuthJson(ctx.auth)},
            {"timeout", std::to_string(ToSeconds(ctx.call_timeout)) + "s"}};
  act::KubeResource known;
  const bool is_known = act::ResourceForKind(kind, known);
  if (is_known && !api.empty() && api != known.ApiVersion()) {
    errors.push_back("spec.scaleTargetRef.apiVersion: a " + kind + " is " + known.ApiVersion() +
                     ", got '" + api + "'");
  }
  if (ref.contains("resource")) {
    if (api.empty()) errors.push_back("spec.scaleTargetRef.apiVersion: required with resource");
    t["resource"] = api + "/" + StringAt(ref, "resource");
  } else if (!is_known) {
    errors.push_back("spec.scaleTargetRef.kind: unknown kind '" + kind +
                     "' (known: Deployment, StatefulSet, PyTorchJob); for a custom resource "
                     "with a /scale subresource add resource (its plural) and ready_path");
  }
  if (ref.contains("ready_path")) t["ready_path"] = ref["ready_path"];
  if (ref.contains("gpu_capacity")) t["gpu_capacity"] = ref["gpu_capacity"];
  return t;
}

// The workload map of spec (name, namespace and target filled in); problems go to `errors`.
json WorkloadMap(const json& spec, ParsedAiScaler& p, const AiScalerContext& ctx) {
  json w = spec;
  const json ref = spec.contains("scaleTargetRef") ? spec["scaleTargetRef"] : json();
  w.erase("scaleTargetRef");
  for (const char* f : {"name", "namespace", "target"}) {
    if (!w.contains(f)) continue;
    p.errors.push_back(std::string("spec.") + f +
                       ": not allowed in an AIScaler (metadata names it, scaleTargetRef says "
                       "what it scales)");
    w.erase(f);
  }
  w["name"] = p.name;
  w["namespace"] = p.namespace_;
  if (!ref.is_object() || StringAt(ref, "kind").empty() || StringAt(ref, "name").empty()) {
    p.errors.push_back(
        "spec.scaleTargetRef: must be a map with kind and name (and apiVersion), "
        "e.g. {apiVersion: apps/v1, kind: Deployment, name: llm}");
    return w;
  }
  p.reference = StringAt(ref, "kind") + "/" + StringAt(ref, "name");
  if (!w.contains("kind")) w["kind"] = StringAt(ref, "kind");
  w["target"] = TargetOf(ref, p.namespace_, ctx, p.errors);
  return w;
}

void ReadTargets(const json& spec, ParsedAiScaler& p) {
  const json policy = spec.is_object() ? spec.value("policy", json()) : json();
  for (const json& s : spec.is_object() ? spec.value("signals", json::array()) : json::array()) {
    const std::string name = StringAt(s, "name");
    if (!name.empty()) p.signal_order.push_back(name);
  }
  if (!policy.is_object()) return;
  const std::string name = StringAt(policy, "name");
  if (name == "hpa" && policy.contains("metrics") && policy["metrics"].is_array()) {
    for (const json& m : policy["metrics"]) {
      const json t = m.is_object() ? m.value("target", json()) : json();
      if (!t.is_object()) continue;
      std::string text = NumberText(t.value("value", json()));
      if (StringAt(t, "type") == "Utilization" && !text.empty()) text += "%";
      if (!StringAt(m, "signal").empty()) p.targets[StringAt(m, "signal")] = text;
    }
  } else if (name == "kpa") {
    const std::string signal =
        policy.contains("signal") ? StringAt(policy, "signal") : "concurrency";
    p.targets[signal] = policy.contains("target") ? NumberText(policy["target"]) : "100";
  }
}

void ReadHolds(const json& meta, ParsedAiScaler& p) {
  const json annotations = meta.value("annotations", json::object());
  const auto get = [&](const std::string& k) -> std::optional<std::string> {
    if (!annotations.is_object()) return std::nullopt;
    const auto it = annotations.find(k);
    if (it == annotations.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  Result<decide::PauseSpec> pause = decide::ParsePauseAnnotations(get);
  if (pause.ok()) {
    p.pause = std::move(pause).value();
  } else {
    // A hold that cannot be read holds: it must not turn into a scale.
    p.pause_error = pause.status().message();
    p.pause.paused = true;
    p.pause.source = "an annotation that cannot be read";
  }
  for (const char* k : {decide::kPausedAnnotation, decide::kPausedScaleDownAnnotation,
                        decide::kPausedScaleUpAnnotation, decide::kPausedReplicasAnnotation}) {
    p.fingerprint += std::string("\n") + k + "=" + get(k).value_or("<none>");
  }
}

}  // namespace

ParsedAiScaler ParseAiScaler(const json& object, const AiScalerContext& ctx) {
  ParsedAiScaler p;
  const json meta = object.is_object() ? object.value("metadata", json::object()) : json();
  p.name = StringAt(meta, "name");
  p.namespace_ = StringAt(meta, "namespace");
  p.uid = StringAt(meta, "uid");
  p.resource_version = StringAt(meta, "resourceVersion");
  if (meta.is_object() && meta.contains("generation") && meta["generation"].is_number_integer()) {
    p.generation = meta["generation"].get<int64_t>();
  }
  p.key = p.namespace_.empty() ? p.name : p.namespace_ + "/" + p.name;
  const json spec = object.is_object() ? object.value("spec", json()) : json();
  p.fingerprint = p.uid + "\n" + spec.dump(-1, ' ', false, json::error_handler_t::replace);
  if (meta.is_object()) ReadHolds(meta, p);
  if (p.name.empty() || p.namespace_.empty()) {
    p.errors.push_back("metadata: an AIScaler needs a name and a namespace");
    return p;
  }
  if (!spec.is_object()) {
    p.errors.push_back("spec: must be a map (a workload: scaleTargetRef, policy, ...)");
    return p;
  }
  ReadTargets(spec, p);
  const json w = WorkloadMap(spec, p, ctx);
  const std::string text = json{{"spec", w}}.dump(-1, ' ', false, json::error_handler_t::replace);
  config::ConfigErrors errs;
  const config::ConfigNode root = config::ParseConfig(text, "AIScaler " + p.key, errs);
  std::optional<WorkloadSpec> ws;
  if (root.IsDefined()) {
    ws = ParseWorkloadEntry(root.Child("spec"), *ctx.registries, ctx.period_s, *ctx.sources,
                            ctx.pool);
  }
  for (const config::ConfigError& e : errs.all()) {
    const std::string path = ObjectPath(e.path);
    p.errors.push_back(path.empty() ? e.message : path + ": " + e.message);
  }
  if (p.errors.empty() && ws) p.workload = std::move(ws);
  if (p.errors.empty() && !p.workload) p.errors.push_back("spec: cannot be read");
  return p;
}

}  // namespace aiscale::cli
