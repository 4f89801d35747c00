// RunCache: results that every run of one scenario shares, so they are computed once: the
// oracle of an inference workload's trace is the same whichever policy runs against it.
//
// Keys name what is stored ("oracle/<workload>"); a key holds one type, checked on every
// lookup (a lookup with another type finds nothing). Owned by whoever runs the scenario's
// policies (RunScenario, a sweep) and handed to workloads through WorkloadEnv; nothing is
// global. Not thread-safe, like the simulator.
#pragma once

#include <any>
#include <map>
#include <memory>
#include <string>

namespace aiscale::sim {

class RunCache {
 public:
  template <typename T>
  std::shared_ptr<const T> Find(const std::string& key) const {
    const auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    const auto* v = std::any_cast<std::shared_ptr<const T>>(&it->second);
    return v ? *v : nullptr;
  }
  template <typename T>
  void Put(const std::string& key, std::shared_ptr<const T> value) {
    entries_[key] = std::move(value);
  }

 private:
  std::map<std::string, std::any> entries_;
};

}  // namespace aiscale::sim
