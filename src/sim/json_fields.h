// NumberOr: a numeric field of a report.json object, or `fallback` when it is absent or not a
// number. The report writers read run entries that different workload kinds fill, so a
// missing figure is normal, not an error.
#pragma once

#include <nlohmann/json.hpp>

namespace aiscale::sim {

inline double NumberOr(const nlohmann::json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace aiscale::sim
