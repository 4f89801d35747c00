#include "store/memory_store.h"

#include <algorithm>

namespace aiscale::store {

Status MemoryStore::Append(const Decision& d) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& q = decisions_[d.workload];
  q.push_back(d);
  if (options_.keep_last > 0) {
    while (q.size() > options_.keep_last) q.pop_front();
  }
  return Status::Ok();
}

Result<std::vector<Decision>> MemoryStore::Recent(const std::string& workload, size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Decision> out;
  auto it = decisions_.find(workload);
  if (it == decisions_.end()) return out;
  const auto& q = it->second;
  const size_t k = std::min(n, q.size());
  out.assign(q.end() - static_cast<std::ptrdiff_t>(k), q.end());
  return out;
}

Result<PersistentState> MemoryStore::LoadState(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = state_.find(key);
  if (it == state_.end()) return PersistentState{};
  return it->second;
}

Status MemoryStore::SaveState(const std::string& key, const PersistentState& state) {
  std::lock_guard<std::mutex> lock(mu_);
  state_[key] = state;
  return Status::Ok();
}

}  // namespace aiscale::store
