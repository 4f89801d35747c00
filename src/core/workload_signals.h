// WorkloadSignals: what a policy may know about one workload's signals at a tick.
//
// Why: staleness, NaN, infinity and out-of-range filtering happen here, once, for every
// source. For each signal it keeps the latest snapshot (valid per-instance values, their sum
// and mean, or the reason there is no data) and bounded histories of the per-tick sum and mean.
// A signal with status != kOk is missing data: policies must not scale down on it.
// Not thread-safe; the Controller owns one per workload.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/observation.h"
#include "core/time_series.h"

namespace aiscale {

enum class SignalStatus { kOk, kMissing, kStale, kInvalid, kFetchFailed };
std::string_view SignalStatusName(SignalStatus s);

struct InstanceValue {
  std::string instance;
  double value;
  TimePoint at;
  bool ready;
};

struct SignalSnapshot {
  SignalStatus status = SignalStatus::kMissing;
  std::string detail;                    // why status is not ok (or what was dropped)
  std::vector<InstanceValue> instances;  // valid values only
  double sum = 0;
  double mean = 0;
  TimePoint at{};    // newest valid measurement
  int rejected = 0;  // observations dropped in the last ingest
  bool ok() const { return status == SignalStatus::kOk; }
};

class WorkloadSignals {
 public:
  explicit WorkloadSignals(size_t history_capacity = 4096) : history_capacity_(history_capacity) {}

  // Replaces the snapshot of `signal` with the valid subset of `obs` (all for that signal).
  // Values older than now - staleness, NaN, inf or out of range are dropped and counted.
  void Ingest(std::string_view signal, const std::vector<Observation>& obs, TimePoint now,
              Duration staleness);
  // Records that the source could not be asked (the fetch failed): missing data.
  void MarkFetchFailed(std::string_view signal, std::string detail);

  // Snapshot of a signal; a never-seen signal is kMissing.
  const SignalSnapshot& Get(std::string_view signal) const;
  // Per-tick sums / means of valid values, oldest first (for windows and forecasts).
  const TimeSeries& SumHistory(std::string_view signal) const;
  const TimeSeries& MeanHistory(std::string_view signal) const;
  std::vector<std::string> Names() const;

 private:
  struct Entry {
    SignalSnapshot snap;
    TimeSeries sums;
    TimeSeries means;
  };
  Entry& EntryFor(std::string_view signal);
  size_t history_capacity_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace aiscale
