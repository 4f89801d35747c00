// WorkloadSignals: what a policy may know about one workload's signals at a tick.
//
// Why: staleness, NaN, infinity and out-of-range filtering happen here, once, for every
// source. For each signal it keeps the latest snapshot (valid per-instance values, their sum
// and mean, or the reason there is no data) and bounded histories of the per-tick sum and mean.
// A signal with status != kOk is missing data: policies must not scale down on it.
// A signal is looked up by name, or by the index Slot() gave it (the Controller resolves its
// bound signals once, not by string every tick). References returned stay valid for the
// object's life. Not thread-safe; the Controller owns one per workload.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/observation.h"
#include "core/signal.h"
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

  // The index of `signal`, for the overloads below that take one; adds the signal (as if
  // fetched and missing: its snapshot reads kMissing with no detail) when it is new.
  size_t Slot(std::string_view signal);

  // Replaces the snapshot of `signal` with the valid subset of `obs` (all for that signal).
  // Values older than now - staleness, NaN, inf or out of range are dropped and counted.
  void Ingest(std::string_view signal, const std::vector<Observation>& obs, TimePoint now,
              Duration staleness) {
    Ingest(Slot(signal), obs, now, staleness);
  }
  void Ingest(size_t slot, const std::vector<Observation>& obs, TimePoint now, Duration staleness);
  // Records that the source could not be asked (the fetch failed): missing data.
  void MarkFetchFailed(std::string_view signal, std::string detail) {
    MarkFetchFailed(Slot(signal), std::move(detail));
  }
  void MarkFetchFailed(size_t slot, std::string detail);

  // Snapshot of a signal; a never-seen signal is kMissing.
  const SignalSnapshot& Get(std::string_view signal) const;
  const SignalSnapshot& Get(size_t slot) const { return entries_[slot].snap; }
  // Per-tick sums / means of valid values, oldest first (for windows and forecasts).
  const TimeSeries& SumHistory(std::string_view signal) const;
  const TimeSeries& MeanHistory(std::string_view signal) const;
  std::vector<std::string> Names() const;  // in name order

 private:
  struct Entry {
    std::string name;
    signals::Range range;  // looked up once, not per ingest
    SignalSnapshot snap;
    TimeSeries sums;
    TimeSeries means;
  };
  // The entry of `signal`, or null. A linear scan: a workload reads a handful of signals, and
  // comparing a few short names beats a tree of them.
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t IndexOf(std::string_view signal) const;  // kNone when absent
  const Entry* Find(std::string_view signal) const;
  size_t history_capacity_;
  std::deque<Entry> entries_;  // in the order first seen; a deque, so references stay valid
};

}  // namespace aiscale
