// WorkloadSignals: what a policy may know about one workload's signals at a tick.
//
// Why: staleness, NaN, infinity, out-of-range and future-timestamp filtering happen here,
// once, for every source. For each signal it keeps the latest snapshot (valid per-instance
// values, their sum and mean, or the reason there is no data) and bounded histories of the
// per-tick sum and mean. A signal without values (ok() false) is missing data; one with values
// of which some were dropped, or with a ready replica that reported none, is kPartial: policies
// may use its values (a lower bound on what is there) but the Controller vetoes a scale-down on
// it. Given the engine's replicas (ReplicaSet), per-replica series are matched to them: series
// of other instances are foreign and ignored, duplicates of one instance count once (the newest
// sample), and the detail says so.
// A signal is looked up by name, or by the index Slot() gave it (the Controller resolves its
// bound signals once, not by string every tick). References returned stay valid for the
// object's life. Not thread-safe; the Controller owns one per workload.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/observation.h"
#include "core/replica_set.h"
#include "core/signal.h"
#include "core/time_series.h"

namespace aiscale {

// kPartial: some values usable, some dropped (see the class comment). Appended last: the
// numeric values are not stored, the names are.
enum class SignalStatus { kOk, kMissing, kStale, kInvalid, kFetchFailed, kPartial };
std::string_view SignalStatusName(SignalStatus s);
// True for the statuses that carry values (kOk and kPartial).
inline bool HasValues(SignalStatus s) {
  return s == SignalStatus::kOk || s == SignalStatus::kPartial;
}

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
  TimePoint at{};      // newest valid measurement
  int rejected = 0;    // observations dropped in the last ingest (invalid, stale, future)
  int foreign = 0;     // series of instances that are not the engine's replicas, ignored
  int duplicates = 0;  // series repeating an instance already counted
  // Has values to use (kOk or kPartial); a partial signal still vetoes a scale-down.
  bool ok() const { return HasValues(status); }
  // Every value usable and every ready replica reporting.
  bool complete() const { return status == SignalStatus::kOk; }
  // A value below 0: only a custom signal (no range) can carry one, and no amount of demand or
  // load a policy divides by a positive target is negative (one glitch of -1000 among pods at
  // 10 scaled to the minimum).
  bool AnyNegative() const {
    for (const InstanceValue& iv : instances) {
      if (iv.value < 0) return true;
    }
    return false;
  }
};

class WorkloadSignals {
 public:
  explicit WorkloadSignals(size_t history_capacity = 4096) : history_capacity_(history_capacity) {}

  // The index of `signal`, for the overloads below that take one; adds the signal (as if
  // fetched and missing: its snapshot reads kMissing with no detail) when it is new.
  size_t Slot(std::string_view signal);

  // Replaces the snapshot of `signal` with the valid subset of `obs` (all for that signal).
  // Values older than now - staleness, stamped later than now + staleness, NaN, inf or out of
  // range are dropped and counted. `replicas` (null: the engine does not say) are the
  // workload's replicas now: when some observation names one of them, or says it names a
  // replica (Observation::per_replica), the signal is per-replica, and observations of other
  // instances are foreign.
  void Ingest(std::string_view signal, const std::vector<Observation>& obs, TimePoint now,
              Duration staleness, const ReplicaSet* replicas = nullptr) {
    Ingest(Slot(signal), obs, now, staleness, replicas);
  }
  void Ingest(size_t slot, const std::vector<Observation>& obs, TimePoint now, Duration staleness,
              const ReplicaSet* replicas = nullptr);
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
  // What one ingest dropped or set aside, and why.
  struct Drops {
    int invalid = 0, stale = 0, future = 0, foreign = 0, duplicates = 0;
    int silent_replicas = 0;    // ready replicas without a value
    std::string foreign_names;  // the first few, for the detail
    std::string silent_names;   // likewise
  };
  struct Entry {
    std::string name;
    signals::Range range;  // looked up once, not per ingest
    SignalSnapshot snap;
    bool all_kept = false;  // the last ingest kept every observation (so they were distinct)
    TimeSeries sums;
    TimeSeries means;
  };
  // The entry of `signal`, or null. A linear scan: a workload reads a handful of signals, and
  // comparing a few short names beats a tree of them.
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t IndexOf(std::string_view signal) const;  // kNone when absent
  const Entry* Find(std::string_view signal) const;
  // Keeps `o` in snap.instances[kept] unless an earlier one names the same instance (then the
  // newer of the two stays); returns false for a duplicate. `replica`: the engine's replica
  // `o` names, or ReplicaSet::kNone; `distinct`: the ingest's instances are known distinct.
  bool Keep(SignalSnapshot& snap, size_t& kept, const Observation& o, int replica, bool distinct);
  // The kept index of an earlier observation of `instance`, or kNone: by name among all kept,
  // or among those of one replica.
  size_t PriorByName(const SignalSnapshot& snap, size_t kept, const std::string& instance);
  size_t PriorOfReplica(const SignalSnapshot& snap, int replica, const std::string& instance) const;
  bool IsKept(const SignalSnapshot& snap, size_t kept, std::string_view instance) const;
  static void Describe(const Drops& d, size_t total, Duration staleness, SignalSnapshot& snap);
  size_t history_capacity_;
  std::deque<Entry> entries_;  // in the order first seen; a deque, so references stay valid
  // Scratch reused by every ingest: instance -> index into the snapshot; per replica, its
  // last kept index (kNone: it reported nothing), and per kept index the one before it of the
  // same replica.
  std::unordered_map<std::string_view, size_t> seen_;
  std::vector<size_t> last_of_replica_;
  std::vector<size_t> prev_same_;
  enum class Drop { kInvalid, kStale, kFuture };
  std::vector<std::pair<size_t, Drop>> dropped_;  // index into the observations, why
};

}  // namespace aiscale
