// PersistentState: the learned state of a policy or stabilizer, as plain named numbers.
//
// Why: policies are pure, so whatever they learn (a throughput fit, a forecaster's level and
// seasonals, a recommendation history) lives here, owned and persisted by the Controller
// through the Store. Plain vectors of doubles keep it serializable without a schema per policy.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace aiscale {

// Keys are looked up by string_view through a transparent comparator, so a policy reading
// "kpa.panic_time" builds no std::string; only a key seen for the first time is copied.
struct PersistentState {
  std::map<std::string, std::vector<double>, std::less<>> values;

  double Get(std::string_view key, double fallback) const {
    auto it = values.find(key);
    return it == values.end() || it->second.empty() ? fallback : it->second.front();
  }
  void Set(std::string_view key, double v) {
    std::vector<double>& vec = Vec(key);
    vec.assign(1, v);
  }
  std::vector<double>& Vec(std::string_view key) {
    auto it = values.lower_bound(key);
    if (it == values.end() || it->first != key)
      it = values.emplace_hint(it, key, std::vector<double>{});
    return it->second;
  }
  const std::vector<double>* FindVec(std::string_view key) const {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  }
  bool operator==(const PersistentState&) const = default;
};

}  // namespace aiscale
