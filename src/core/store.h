// Store: durable record of decisions and of policy/stabilizer state, so a restarted
// controller continues where it stopped (windows, cooldowns, learned models).
//
// Contract: Append and SaveState are durable when they return ok. LoadState of a workload
// never saved returns an empty state, not an error. Thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/decision.h"
#include "core/result.h"
#include "core/state.h"

namespace aiscale {

// One workload's tick for the Store: its Decision and the states to save with it.
struct StoreWrite {
  const Decision* decision = nullptr;
  std::vector<std::pair<std::string, const PersistentState*>> states;  // key, state
  // Write the states now even where the store writes states only every few ticks
  // (StoreOptions::state_every_ticks): a clean stop flushes them all this way.
  bool flush = false;
};

class Store {
 public:
  virtual ~Store() = default;
  virtual Status Append(const Decision& d) = 0;
  // Every write of a tick as one commit: all durable when it returns ok, none applied when it
  // does not (a controller over thousands of workloads pays one sync per tick, not three per
  // workload). The default applies them one by one, for stores without transactions.
  virtual Status WriteBatch(const std::vector<StoreWrite>& writes) {
    for (const StoreWrite& w : writes) {
      if (w.decision) RETURN_IF_ERROR(Append(*w.decision));
      for (const auto& [key, state] : w.states) RETURN_IF_ERROR(SaveState(key, *state));
    }
    return Status::Ok();
  }
  // Newest last; at most n. A stored decision that cannot be decoded (a corrupt row) is
  // skipped, not an error: one bad row must not hide the rest of the history (a restart would
  // begin at min_replicas, the API answer 500 for good); the store counts what it skipped.
  virtual Result<std::vector<Decision>> Recent(const std::string& workload, size_t n) = 0;
  virtual Result<PersistentState> LoadState(const std::string& key) = 0;
  virtual Status SaveState(const std::string& key, const PersistentState& state) = 0;
};

}  // namespace aiscale
