// What the Kubernetes API server's authorizer sees in one HTTP request: (verb, apiGroup,
// resource[/subresource], namespace, name), derived from the method, path and query by the
// API server's own rules (k8s.io/apiserver endpoints/request RequestInfoFactory): GET is get on
// a named object, else list, or watch with ?watch=true or a /watch/ prefix; POST create; PUT
// update; PATCH patch; DELETE delete, or deletecollection without a name; /namespaces/{ns}/
// scopes a request except for a namespace's own subresources (status, finalize). Paths that
// are not /api/{v}/... or /apis/{g}/{v}/... (discovery, /healthz) are non-resource requests.
// Test-only, pure.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace aiscale::deploy_test {

struct KubeRequestInfo {
  bool resource_request = false;
  std::string verb;  // for a non-resource request, the lower-case method
  std::string group;
  std::string version;
  std::string resource;
  std::string subresource;
  std::string namespace_;
  std::string name;

  // The RBAC resource: "deployments/scale", "leases".
  std::string RbacResource() const {
    return subresource.empty() ? resource : resource + "/" + subresource;
  }
  std::string ToString() const {  // "patch apps deployments/scale in serving"
    return verb + " " + (group.empty() ? "\"\"" : group) + " " + RbacResource() +
           (namespace_.empty() ? " (cluster)" : " in " + namespace_);
  }
};

namespace internal {

inline std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

// True when the query asks for a watch (watch=… other than false or 0).
inline bool WantsWatch(const std::string& query) {
  for (const std::string& kv : Split(query, '&')) {
    const size_t eq = kv.find('=');
    if (kv.substr(0, eq) != "watch") continue;
    const std::string v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    return v != "false" && v != "0" && v != "False" && v != "FALSE";
  }
  return false;
}

inline std::string VerbOfMethod(const std::string& method) {
  if (method == "POST") return "create";
  if (method == "GET" || method == "HEAD") return "get";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "";
}

inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace internal

inline KubeRequestInfo KubeRequestInfoOf(const std::string& method, const std::string& path,
                                         const std::string& query = "") {
  KubeRequestInfo info;
  info.verb = internal::Lower(method);
  std::vector<std::string> parts = internal::Split(path, '/');
  // A resource path has at least /api/{version}/{resource} or /apis/{group}/{version}/{resource}.
  if (parts.size() < 3 || (parts[0] != "api" && parts[0] != "apis")) return info;
  size_t i = 1;
  if (parts[0] == "apis") {
    if (parts.size() < 4) return info;
    info.group = parts[i++];
  }
  info.resource_request = true;
  info.version = parts[i++];
  std::vector<std::string> rest(parts.begin() + static_cast<long>(i), parts.end());
  if (rest[0] == "watch" && rest.size() >= 2) {
    info.verb = "watch";
    rest.erase(rest.begin());
  } else {
    info.verb = internal::VerbOfMethod(method);
  }
  if (rest[0] == "namespaces" && rest.size() > 1) {
    info.namespace_ = rest[1];
    const bool ns_subresource = rest.size() > 2 && (rest[2] == "status" || rest[2] == "finalize");
    if (rest.size() > 2 && !ns_subresource) rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.size() >= 3) info.subresource = rest[2];
  if (rest.size() >= 2) info.name = rest[1];
  info.resource = rest[0];
  if (info.name.empty() && info.verb == "get") {
    info.verb = internal::WantsWatch(query) ? "watch" : "list";
  }
  if (info.name.empty() && info.verb == "delete") info.verb = "deletecollection";
  return info;
}

}  // namespace aiscale::deploy_test
