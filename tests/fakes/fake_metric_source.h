// FakeMetricSource: serves scripted observations per signal, or a scripted failure.
// Values are stamped with the fetch time unless a fixed timestamp is set.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/metric_source.h"

namespace aiscale::testing {

class FakeMetricSource final : public MetricSource {
 public:
  std::string_view Name() const override { return "fake"; }
  Result<std::vector<Observation>> Fetch(const MetricQuery& q, TimePoint now) override {
    ++fetches;
    if (failing.count(q.signal)) {
      return Status::Error("unable to fetch " + q.signal + " for " + q.workload.Key() +
                           ": injected");
    }
    std::vector<Observation> out;
    auto it = values.find(q.signal);
    if (it == values.end()) return out;
    int i = 0;
    for (double v : it->second) {
      out.push_back({q.signal, "i" + std::to_string(i++), v, stamp.value_or(now), true});
    }
    return out;
  }
  // One value per instance.
  void Set(const std::string& signal, std::vector<double> v) { values[signal] = std::move(v); }

  std::map<std::string, std::vector<double>> values;
  std::map<std::string, bool> failing;
  std::optional<TimePoint> stamp;
  int fetches = 0;
};

}  // namespace aiscale::testing
