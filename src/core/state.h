// PersistentState: the learned state of a policy or stabilizer, as plain named numbers.
//
// Why: policies are pure, so whatever they learn (a throughput fit, a forecaster's level and
// seasonals, a recommendation history) lives here, owned and persisted by the Controller
// through the Store. Plain vectors of doubles keep it serializable without a schema per policy.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace aiscale {

struct PersistentState {
  std::map<std::string, std::vector<double>> values;

  double Get(const std::string& key, double fallback) const {
    auto it = values.find(key);
    return it == values.end() || it->second.empty() ? fallback : it->second.front();
  }
  void Set(const std::string& key, double v) { values[key] = {v}; }
  std::vector<double>& Vec(const std::string& key) { return values[key]; }
  const std::vector<double>* FindVec(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  }
  bool operator==(const PersistentState&) const = default;
};

}  // namespace aiscale
