// What deploy/'s RBAC objects grant one ServiceAccount, as the RBAC authorizer evaluates it: a
// Role's rules apply in its namespace through a RoleBinding there; a ClusterRole's rules apply
// cluster-wide through a ClusterRoleBinding, or in one namespace through a RoleBinding. Each
// granted (verb, apiGroup, resource) is one Grant. Problems that make a grant broader than
// what it names, or meaningless, are listed instead: a wildcard, nonResourceURLs, a binding to
// a role that does not exist, a role bound to nobody. Test-only, pure.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "deploy/kube_request_info.h"
#include "deploy/manifests.h"

namespace aiscale::deploy_test {

struct Grant {
  std::string verb;
  std::string group;
  std::string resource;         // "deployments/scale"
  std::string namespace_;       // "" : every namespace and cluster-scoped resources
  std::set<std::string> names;  // resourceNames; empty: any
  std::string from;             // "02-rbac.yaml Role serving/aiscale-scaler"

  bool Allows(const KubeRequestInfo& r) const {
    return r.resource_request && r.verb == verb && r.group == group &&
           r.RbacResource() == resource && (namespace_.empty() || namespace_ == r.namespace_) &&
           (names.empty() || names.count(r.name) > 0);
  }
  std::string ToString() const {
    return verb + " " + (group.empty() ? "\"\"" : group) + " " + resource +
           (namespace_.empty() ? " (cluster-wide)" : " in " + namespace_) + " from " + from;
  }
};

struct RbacGrants {
  std::vector<Grant> grants;
  std::vector<std::string> problems;
};

namespace internal {

inline std::vector<std::string> Strings(const YAML::Node& list) {
  std::vector<std::string> out;
  if (list && list.IsSequence()) {
    for (const YAML::Node& n : list) out.push_back(n.as<std::string>(""));
  }
  return out;
}

struct RoleRules {
  std::string from;
  YAML::Node rules;
  bool bound = false;
};

inline void AddRules(RoleRules& role, const std::string& ns, RbacGrants& out) {
  role.bound = true;
  for (const YAML::Node& rule : role.rules) {
    if (rule["nonResourceURLs"]) out.problems.push_back(role.from + ": nonResourceURLs");
    const std::vector<std::string> names = Strings(rule["resourceNames"]);
    for (const std::string& verb : Strings(rule["verbs"])) {
      for (const std::string& group : Strings(rule["apiGroups"])) {
        for (const std::string& resource : Strings(rule["resources"])) {
          for (const std::string& s : {verb, group, resource}) {
            if (s.find('*') != std::string::npos) {
              out.problems.push_back(role.from + ": wildcard '" + s + "' in " + verb + " " + group +
                                     " " + resource);
            }
          }
          out.grants.push_back(
              {verb, group, resource, ns, {names.begin(), names.end()}, role.from});
        }
      }
    }
  }
}

inline bool BindsSubject(const YAML::Node& binding, const std::string& sa_ns,
                         const std::string& sa_name) {
  for (const YAML::Node& s : binding["subjects"]) {
    if (s["kind"].as<std::string>("") == "ServiceAccount" &&
        s["name"].as<std::string>("") == sa_name && s["namespace"].as<std::string>("") == sa_ns) {
      return true;
    }
  }
  return false;
}

}  // namespace internal

// The grants of ServiceAccount `sa_ns`/`sa_name` in `all`.
inline RbacGrants GrantsFor(const std::vector<Manifest>& all, const std::string& sa_ns,
                            const std::string& sa_name) {
  using internal::RoleRules;
  std::map<std::string, RoleRules> roles;  // "Role ns/name" or "ClusterRole name"
  for (const Manifest& m : all) {
    if (m.Kind() == "Role") {
      roles["Role " + m.Namespace() + "/" + m.Name()] = {
          m.file + " Role " + m.Namespace() + "/" + m.Name(), m.node["rules"]};
    } else if (m.Kind() == "ClusterRole") {
      roles["ClusterRole " + m.Name()] = {m.file + " ClusterRole " + m.Name(), m.node["rules"]};
    }
  }
  RbacGrants out;
  for (const Manifest& m : all) {
    const bool cluster = m.Kind() == "ClusterRoleBinding";
    if (!cluster && m.Kind() != "RoleBinding") continue;
    if (!internal::BindsSubject(m.node, sa_ns, sa_name)) continue;
    const std::string ref_kind = m.node["roleRef"]["kind"].as<std::string>("");
    const std::string ref_name = m.node["roleRef"]["name"].as<std::string>("");
    const std::string key = ref_kind == "ClusterRole" ? "ClusterRole " + ref_name
                                                      : "Role " + m.Namespace() + "/" + ref_name;
    auto it = roles.find(key);
    if (it == roles.end() || (cluster && ref_kind != "ClusterRole")) {
      out.problems.push_back(m.file + " " + m.Kind() + " " + m.Name() + ": binds missing " + key);
      continue;
    }
    internal::AddRules(it->second, cluster ? "" : m.Namespace(), out);
  }
  for (const auto& [key, role] : roles) {
    if (!role.bound) out.problems.push_back(role.from + ": bound to nobody (grants nothing)");
  }
  return out;
}

}  // namespace aiscale::deploy_test
