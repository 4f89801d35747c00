// Store: durable record of decisions and of policy/stabilizer state, so a restarted
// controller continues where it stopped (windows, cooldowns, learned models).
//
// Contract: Append and SaveState are durable when they return ok. LoadState of a workload
// never saved returns an empty state, not an error. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/decision.h"
#include "core/result.h"
#include "core/state.h"

namespace aiscale {

class Store {
 public:
  virtual ~Store() = default;
  virtual Status Append(const Decision& d) = 0;
  // Newest last; at most n.
  virtual Result<std::vector<Decision>> Recent(const std::string& workload, size_t n) = 0;
  virtual Result<PersistentState> LoadState(const std::string& key) = 0;
  virtual Status SaveState(const std::string& key, const PersistentState& state) = 0;
};

}  // namespace aiscale
