#include "store/memory_store.h"

#include <algorithm>

namespace aiscale::store {

Status MemoryStore::Append(const Decision& d) {
  std::lock_guard<std::mutex> lock(mu_);
  const ChangeFilter::Offer o = filter_.Consider(d);
  if (o.verdict == ChangeFilter::Verdict::kSkip) return Status::Ok();
  auto& q = decisions_[d.workload];
  q.push_back(o.verdict == ChangeFilter::Verdict::kHeartbeat ? ChangeFilter::Stamp(d, o) : d);
  if (options_.keep_last > 0) {
    while (q.size() > options_.keep_last) q.pop_front();
  }
  // Per workload here (nothing to batch in memory): the same decisions go as in SqliteStore,
  // once that store's batches have caught up.
  if (options_.retention.count() > 0) {
    while (!q.empty() && q.front().at < d.at - options_.retention) q.pop_front();
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
