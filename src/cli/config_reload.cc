#include "cli/config_reload.h"

#include <map>

#include <yaml-cpp/yaml.h>

namespace aiscale::cli {
namespace {

// The fields of a workload that name it or tie it to sources and an engine.
constexpr const char* kWorkloadRestartFields[] = {"name", "namespace", "kind", "signals", "target"};
// The server's fields a reload may change.
constexpr const char* kServerReloadable[] = {"token", "token_file"};

std::string Emit(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

}  // namespace

RestartParts RestartPartsOf(const config::ConfigNode& root) {
  RestartParts out;
  const YAML::Node spec = root.raw()["spec"];
  if (!spec || !spec.IsMap()) return out;
  std::string workload_names;
  for (const auto& kv : spec) {
    const std::string key = kv.first.as<std::string>("");
    if (key == "workloads") continue;
    YAML::Node value = YAML::Clone(kv.second);
    if (key == "server" && value.IsMap()) {
      for (const char* f : kServerReloadable) value.remove(f);
    }
    out["spec." + key] = Emit(value);
  }
  // Indexing a const node for a key it lacks gives an invalid node, whose type cannot be
  // asked: check that it is there first (a config of AIScalers only has no `workloads:`).
  const YAML::Node workloads = spec["workloads"];
  if (!workloads || !workloads.IsSequence()) return out;
  for (const YAML::Node& w : workloads) {
    if (!w.IsMap()) continue;
    const std::string name = w["namespace"] ? w["namespace"].as<std::string>("") + "/" : "";
    const std::string id = name + w["name"].as<std::string>("");
    workload_names += id + "\n";
    for (const char* f : kWorkloadRestartFields) {
      if (w[f]) out["spec.workloads[" + id + "]." + f] = Emit(w[f]);
    }
  }
  out["spec.workloads (added or removed)"] = workload_names;
  return out;
}

std::string RestartDifference(const RestartParts& a, const RestartParts& b) {
  for (const auto& [path, text] : a) {
    auto it = b.find(path);
    if (it == b.end() || it->second != text) return path;
  }
  for (const auto& [path, text] : b) {
    if (!a.count(path)) return path;
  }
  return "";
}

}  // namespace aiscale::cli
