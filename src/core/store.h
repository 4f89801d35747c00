// Store: durable record of decisions and of policy/stabilizer state, so a restarted
// controller continues where it stopped (windows, cooldowns, learned models).
//
// Contract: Append and SaveState are durable when they return ok. LoadState of a workload
// never saved returns an empty state, not an error. Thread-safe.
#pragma once

#include <memory>
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
};

// A tick's writes given to a Store one workload at a time, each as soon as it is decided, then
// committed as one (WriteBatch's contract: all durable when Commit returns ok, none applied
// when it does not). Why: at 10,000 workloads a workload's Decision and states are in the CPU
// cache right after it is decided and long gone by the end of the tick, so a store that
// encodes and diffs them in Add reads cache, not memory. What a write points to must stay
// valid and unchanged until Commit returns. A batch destroyed without Commit applies nothing.
class StoreBatch {
 public:
  virtual ~StoreBatch() = default;
  virtual void Add(const StoreWrite& w) = 0;
  virtual Status Commit() = 0;
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
  // A batch for one tick's writes. The default keeps the writes and hands them to WriteBatch
  // at Commit; a store that can do part of the work early overrides it.
  virtual std::unique_ptr<StoreBatch> BeginBatch();
  // Newest last; at most n.
  virtual Result<std::vector<Decision>> Recent(const std::string& workload, size_t n) = 0;
  virtual Result<PersistentState> LoadState(const std::string& key) = 0;
  virtual Status SaveState(const std::string& key, const PersistentState& state) = 0;
};

// The default batch: collects the writes, then one WriteBatch.
class CollectingBatch final : public StoreBatch {
 public:
  explicit CollectingBatch(Store& store) : store_(store) {}
  void Add(const StoreWrite& w) override { writes_.push_back(w); }
  Status Commit() override { return store_.WriteBatch(writes_); }

 private:
  Store& store_;
  std::vector<StoreWrite> writes_;
};

inline std::unique_ptr<StoreBatch> Store::BeginBatch() {
  return std::make_unique<CollectingBatch>(*this);
}

}  // namespace aiscale
