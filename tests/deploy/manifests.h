// The Kubernetes manifests in deploy/, loaded for the deploy tests: every YAML document of every
// *.yaml file directly in the folder (what `kubectl apply -f deploy/` reads; deploy/monitoring/
// holds Prometheus and Grafana files, not Kubernetes objects). A test-only helper: parse errors
// throw YAML::Exception, which fails the test that loaded them.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace aiscale::deploy_test {

inline std::string DeployDir() { return std::string(AISCALE_SOURCE_DIR) + "/deploy"; }

struct Manifest {
  std::string file;  // "02-rbac.yaml"
  YAML::Node node;

  std::string Kind() const { return node["kind"].as<std::string>(""); }
  std::string Name() const { return node["metadata"]["name"].as<std::string>(""); }
  std::string Namespace() const { return node["metadata"]["namespace"].as<std::string>(""); }
};

inline std::vector<Manifest> LoadManifests(const std::string& dir = DeployDir()) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // kubectl's order: by name
  std::vector<Manifest> out;
  for (const auto& f : files) {
    for (const YAML::Node& doc : YAML::LoadAllFromFile(f.string())) {
      if (doc.IsMap()) out.push_back({f.filename().string(), doc});
    }
  }
  return out;
}

inline std::vector<Manifest> OfKind(const std::vector<Manifest>& all, const std::string& kind) {
  std::vector<Manifest> out;
  for (const Manifest& m : all) {
    if (m.Kind() == kind) out.push_back(m);
  }
  return out;
}

// The one object of `kind`, or a null node when there is none or more than one.
inline YAML::Node TheOne(const std::vector<Manifest>& all, const std::string& kind) {
  const std::vector<Manifest> found = OfKind(all, kind);
  return found.size() == 1 ? found[0].node : YAML::Node();
}

// The controller config embedded in the ConfigMap (its `config.yaml` key), "" when absent.
inline std::string EmbeddedConfig(const std::vector<Manifest>& all) {
  const YAML::Node cm = TheOne(all, "ConfigMap");
  return cm ? cm["data"]["config.yaml"].as<std::string>("") : "";
}

}  // namespace aiscale::deploy_test
