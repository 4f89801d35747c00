#include "act/kubernetes_target.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <vector>

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;
using config::ConfigNode;

struct KnownKind {
  const char* kind;
  const char* group;
  const char* version;
  const char* resource;
  const char* ready_path;  // under status
};
// Readiness per kind: Deployments and StatefulSets count ready pods; a PyTorchJob's training
// operator reports running workers (its /scale reads the same field, statusReplicasPath).
constexpr KnownKind kKnownKinds[] = {
    {"Deployment", "apps", "v1", "deployments", "readyReplicas"},
    {"StatefulSet", "apps", "v1", "statefulsets", "readyReplicas"},
    {"PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", "replicaStatuses.Worker.active"},
};

bool IsDnsLabelish(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  });
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// "group/version/resource", or "version/resource" for the core group.
bool ParseResourcePath(const std::string& text, KubeResource& r) {
  const std::vector<std::string> parts = Split(text, '/');
  if (parts.size() == 2) {
    r.group = "";
    r.version = parts[0];
    r.resource = parts[1];
  } else if (parts.size() == 3) {
    r.group = parts[0];
    r.version = parts[1];
    r.resource = parts[2];
    if (!IsDnsLabelish(r.group)) return false;
  } else {
    return false;
  }
  return IsDnsLabelish(r.version) && IsDnsLabelish(r.resource) &&
         r.resource.find('.') == std::string::npos;
}

bool ValidReadyPath(const std::string& p) {
  if (p.empty() || p.front() == '.' || p.back() == '.') return false;
  return p.find("..") == std::string::npos;
}

void ParseResource(const ConfigNode& t, KubernetesTargetConfig& c) {
  KubeResource& r = c.resource;
  const bool has_kind = t.Has("kind");
  const bool has_resource = t.Has("resource");
  if (!has_kind && !has_resource) {
    t.Error(
        "missing required field 'kind' or 'resource' (e.g. kind: Deployment, or resource: "
        "apps/v1/deployments)");
    return;
  }
  if (has_resource) {
    const std::string text = t.String("resource", "");
    if (!ParseResourcePath(text, r)) {
      t.ErrorAt("resource",
                "must be group/version/resource (e.g. apps/v1/deployments, "
                "kubeflow.org/v1/pytorchjobs) or v1/resource for the core group");
      return;
    }
    for (const KnownKind& k : kKnownKinds) {  // a known resource gets its kind and readiness
      if (r.group == k.group && r.resource == k.resource) {
        r.kind = k.kind;
        r.ready_path = k.ready_path;
      }
    }
  }
  if (has_kind) {
    const std::string kind = t.String("kind", "");
    KubeResource known;
    if (ResourceForKind(kind, known)) {
      if (has_resource && (known.group != r.group || known.resource != r.resource)) {
        t.ErrorAt("kind",
                  "names " + known.QualifiedName() + " but resource names " + r.QualifiedName());
        return;
      }
      if (!has_resource) r = known;
    } else if (!has_resource) {
      t.ErrorAt("kind", "unknown kind '" + kind +
                            "' (known: Deployment, StatefulSet, PyTorchJob); name a custom "
                            "resource with resource: group/version/resource and ready_path");
      return;
    }
    r.kind = kind;
  }
  if (t.Has("ready_path")) {
    r.ready_path = t.String("ready_path", "");
    if (!ValidReadyPath(r.ready_path)) {
      t.ErrorAt("ready_path",
                "must be a dotted path under the object's status (e.g. "
                "readyReplicas)");
    }
  } else if (r.ready_path.empty()) {
    t.Error("missing required field 'ready_path' for custom resource " + r.QualifiedName() +
            " (a dotted path under its status, e.g. readyReplicas)");
  }
}

KubeAuthConfig ParseAuth(const ConfigNode& t) {
  KubeAuthConfig a;
  const ConfigNode node = t.Child("auth");
  if (!node.IsDefined()) return a;
  if (!node.IsMap()) {
    node.Error("must be a map: {kubeconfig: PATH, context: NAME} or {in_cluster: true}");
    return a;
  }
  node.CheckKnown({"kubeconfig", "context", "in_cluster"});
  const bool in_cluster = node.Bool("in_cluster", false);
  if (in_cluster && (node.Has("kubeconfig") || node.Has("context"))) {
    node.Error("in_cluster: true excludes kubeconfig and context");
    return a;
  }
  if (in_cluster) {
    a.mode = KubeAuthConfig::Mode::kInCluster;
    return a;
  }
  a.context = node.String("context", "");
  if (node.Has("context") && a.context.empty()) node.ErrorAt("context", "must not be empty");
  if (node.Has("kubeconfig")) {
    a.mode = KubeAuthConfig::Mode::kKubeconfig;
    a.kubeconfig = node.String("kubeconfig", "");
    if (a.kubeconfig.empty()) node.ErrorAt("kubeconfig", "must not be empty");
    const std::string file = node.file();
    if (!a.kubeconfig.empty() && a.kubeconfig[0] != '~' && !fs::path(a.kubeconfig).is_absolute() &&
        !file.empty()) {
      a.kubeconfig = (fs::path(file).parent_path() / a.kubeconfig).lexically_normal().string();
    }
  }
  return a;
}

}  // namespace

KubeAuthConfig ParseKubeAuth(const ConfigNode& parent) { return ParseAuth(parent); }

bool ResourceForKind(const std::string& kind, KubeResource& out) {
  for (const KnownKind& k : kKnownKinds) {
    if (kind == k.kind) {
      out = KubeResource{k.group, k.version, k.resource, k.kind, k.ready_path};
      return true;
    }
  }
  return false;
}

KubernetesTargetConfig KubernetesTargetConfig::Parse(const ConfigNode& t) {
  KubernetesTargetConfig c;
  if (!t.IsMap()) {
    t.Error("must be a map with engine: kubernetes and kind or resource");
    return c;
  }
  t.CheckKnown({"engine", "kind", "resource", "namespace", "name", "ready_path", "auth",
                "gpu_capacity", "timeout", "attempt_timeout"});
  t.Enum("engine", "kubernetes", {"kubernetes"});
  ParseResource(t, c);
  c.namespace_ = t.String("namespace", "");
  if (t.Has("namespace") && !IsDnsLabelish(c.namespace_)) {
    t.ErrorAt("namespace", "must be a DNS label (lower case letters, digits, '-')");
  }
  c.name = t.String("name", "");
  if (t.Has("name") && !IsDnsLabelish(c.name)) {
    t.ErrorAt("name", "must be a DNS subdomain (lower case letters, digits, '-', '.')");
  }
  c.auth = ParseAuth(t);
  c.gpu_capacity = t.Bool("gpu_capacity", false);
  const double call = t.DurationSeconds("timeout", 10, config::Above(0));
  const double attempt =
      t.DurationSeconds("attempt_timeout", std::min(5.0, call), config::Above(0));
  if (attempt > call) t.ErrorAt("attempt_timeout", "must be <= timeout");
  c.call_timeout = Seconds(call);
  c.attempt_timeout = Seconds(std::min(attempt, call));
  return c;
}

}  // namespace aiscale::act
