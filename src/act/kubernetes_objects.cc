#include "act/kubernetes_objects.h"

#include <algorithm>
#include <cctype>
#include <climits>

namespace aiscale::act::kube {
namespace {

using nlohmann::json;

// The GPUs a container list asks for (requests, else limits: extended resources default their
// request to the limit).
int ContainerGpus(const json& containers) {
  int64_t sum = 0;
  if (!containers.is_array()) return 0;
  for (const json& c : containers) {
    for (const char* field : {"resources.requests", "resources.limits"}) {
      const json* list = Lookup(c, field);
      if (list && list->is_object() && list->contains(kGpu)) {
        sum = std::min(kMaxGpus, sum + std::max(0, WholeQuantity((*list)[kGpu])));
        break;
      }
    }
  }
  return static_cast<int>(sum);
}

}  // namespace

const json* Lookup(const json& root, const std::string& dotted) {
  const json* at = &root;
  size_t start = 0;
  while (start <= dotted.size()) {
    const size_t end = std::min(dotted.find('.', start), dotted.size());
    const std::string key = dotted.substr(start, end - start);
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
    start = end + 1;
  }
  return at;
}

std::string StringAt(const json& root, const std::string& dotted) {
  const json* at = Lookup(root, dotted);
  return at && at->is_string() ? at->get<std::string>() : std::string();
}

std::optional<int> Int32(const json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return u <= static_cast<uint64_t>(INT_MAX) ? std::optional<int>(static_cast<int>(u))
                                               : std::nullopt;
  }
  if (!v.is_number_integer()) return std::nullopt;
  const int64_t i = v.get<int64_t>();
  return i >= 0 && i <= INT_MAX ? std::optional<int>(static_cast<int>(i)) : std::nullopt;
}

int WholeQuantity(const json& q) {
  if (q.is_number()) {
    const std::optional<int> n = Int32(q);
    return n && *n <= kMaxGpus ? *n : -1;
  }
  if (!q.is_string()) return -1;
  const std::string s = q.get<std::string>();
  if (s.empty() || s.size() > 7 ||
      !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c); })) {
    return -1;
  }
  const int n = std::stoi(s);  // at most 7 digits: cannot throw
  return n <= kMaxGpus ? n : -1;
}

int PodSpecGpus(const json& spec) {
  int init = 0;
  if (spec.contains("initContainers") && spec["initContainers"].is_array()) {
    for (const json& c : spec["initContainers"]) init = std::max(init, ContainerGpus(json{c}));
  }
  return std::max(init, spec.contains("containers") ? ContainerGpus(spec["containers"]) : 0);
}

bool NodeSchedulable(const json& node) {
  const json* unsched = Lookup(node, "spec.unschedulable");
  if (unsched && unsched->is_boolean() && unsched->get<bool>()) return false;
  const json* conds = Lookup(node, "status.conditions");
  if (!conds || !conds->is_array()) return false;
  for (const json& c : *conds) {
    if (StringAt(c, "type") == "Ready") return StringAt(c, "status") == "True";
  }
  return false;
}

}  // namespace aiscale::act::kube
