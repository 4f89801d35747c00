#include "core/replica_set.h"

#include <algorithm>

namespace aiscale {

void ReplicaSet::Assign(const std::vector<ReplicaEndpoint>& endpoints) {
  names_.resize(endpoints.size());
  ready_.assign(endpoints.size(), false);
  ids_used_ = 0;
  // Written over the last tick's strings: the same replicas, usually, so no allocation.
  auto add = [&](std::string_view id, int replica) {
    if (id.empty()) return;
    if (ids_used_ == ids_.size()) ids_.emplace_back();
    ids_[ids_used_].first.assign(id);
    ids_[ids_used_].second = replica;
    ++ids_used_;
  };
  std::string host_port;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    const ReplicaEndpoint& e = endpoints[i];
    names_[i].assign(e.instance);
    ready_[i] = e.ready;
    add(e.instance, static_cast<int>(i));
    if (!e.host.empty() && e.port > 0) {
      host_port.assign(e.host);
      host_port += ':';
      host_port += std::to_string(e.port);
      add(host_port, static_cast<int>(i));
    }
  }
  std::sort(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(ids_used_));
}

int ReplicaSet::Find(std::string_view instance) const {
  const std::string_view key = instance.substr(0, instance.find('/'));
  const auto end = ids_.begin() + static_cast<std::ptrdiff_t>(ids_used_);
  const auto it = std::lower_bound(
      ids_.begin(), end, key,
      [](const std::pair<std::string, int>& a, std::string_view k) { return a.first < k; });
  return it != end && it->first == key ? it->second : kNone;
}

}  // namespace aiscale
