// MemoryStore: the Store kept in process memory, for tests and for runs that need no
// durability (the simulator).
//
// Promises the same contract as SqliteStore (one typed test suite covers both): Recent is
// newest last, LoadState of an unknown key is empty, with keep_last > 0 only the newest
// keep_last decisions of each workload are kept, with a heartbeat only changes and heartbeats
// (change_filter.h), and with a retention only decisions that recent. "Durable" here means until
// destruction. Thread-safe: every method takes one mutex.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/store.h"
#include "store/change_filter.h"
#include "store/store_options.h"

namespace aiscale::store {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(StoreOptions options = {}) : options_(options), filter_(options.heartbeat) {}

  Status Append(const Decision& d) override;
  Result<std::vector<Decision>> Recent(const std::string& workload, size_t n) override;
  Result<PersistentState> LoadState(const std::string& key) override;
  Status SaveState(const std::string& key, const PersistentState& state) override;

 private:
  const StoreOptions options_;
  std::mutex mu_;
  ChangeFilter filter_;                                    // GUARDED_BY(mu_)
  std::map<std::string, std::deque<Decision>> decisions_;  // GUARDED_BY(mu_)
  std::map<std::string, PersistentState> state_;           // GUARDED_BY(mu_)
};

}  // namespace aiscale::store
