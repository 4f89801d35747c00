// ChangeFilter: decides which of a workload's decisions a Store keeps, so that a controller
// over thousands of steady workloads writes what happened, not the same decision every tick.
//
// A decision is stored when it differs from the last one stored for its workload in what it
// decided or saw (see Changed: policy, scale, outcome, rule, binding limit, action, a signal's
// status, the engine's detail), and otherwise once per `heartbeat`: a copy of the tick's
// decision with unchanged_ticks = the ticks since the last stored record (this one included)
// and unchanged_for = the time since it. Times are the decisions' own `at`, so the filter
// needs no clock and follows the simulator's or the daemon's time alike. A heartbeat of zero
// keeps every decision. State is per workload and in memory only: after a restart the first
// decision of each workload is stored again. Not thread-safe: the Store calls it under its
// own lock.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/decision.h"
#include "core/time.h"
#include "store/position_cache.h"

namespace aiscale::store {

class ChangeFilter {
 public:
  explicit ChangeFilter(Duration heartbeat = Duration::zero()) : heartbeat_(heartbeat) {}

  enum class Verdict { kChanged, kHeartbeat, kSkip };
  // What to do with `d`; on kHeartbeat `ticks` and `since` are what the record stands for
  // (set them on the stored copy with Stamp). Records the verdict as if the write succeeds.
  struct Offer {
    Verdict verdict = Verdict::kChanged;
    int ticks = 0;
    Duration since{};
  };
  Offer Consider(const Decision& d);
  // The same for the decision at `position` in a batch whose writer keeps its order from one
  // batch to the next: the workload's entry is found by position first (position_cache.h).
  Offer Consider(const Decision& d, size_t position);
  // A copy of d marked as the heartbeat `o` describes.
  static Decision Stamp(const Decision& d, const Offer& o);
  // Forgets a workload (its next decision is stored): after a failed write.
  void Forget(const std::string& workload) {
    by_position_.Clear();  // it may point at the entry erased
    last_.erase(workload);
  }
  void Clear() {
    by_position_.Clear();
    last_.clear();
  }
  bool keeps_everything() const { return heartbeat_.count() <= 0; }

  // True when b must be stored after a (a stored record, b a later decision).
  static bool Changed(const Decision& a, const Decision& b);

 private:
  // What Changed compares, kept instead of the whole stored Decision.
  struct Key {
    std::string policy, rule, constrain_reason, engine_detail, pool_reason;
    int current = 0, ready = 0, desired = 0, stabilized = 0, constrained = 0;
    int pool_wanted = 0, pool_granted = 0;
    int asleep = 0, asleep_wanted = -1;  // the warm tier
    bool valid = false, vetoed = false;
    Action action = Action::kNone;
    StatusCode action_code = StatusCode::kOk;
    std::vector<std::pair<std::string, SignalStatus>> inputs;
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    Key key;
    TimePoint stored_at{};
    int unchanged = 0;  // ticks since stored_at, not counting it
  };
  static Key KeyOf(const Decision& d);
  static void AssignKey(const Decision& d, Key& k);
  static bool SameAs(const Key& k, const Decision& d);
  // The verdict on d for its workload's entry (null: the workload's first decision).
  Offer ConsiderEntry(const Decision& d, Entry* e);

  const Duration heartbeat_;
  std::unordered_map<std::string, Entry> last_;  // node-based: Entry* stay valid
  PositionCache<Entry*> by_position_;
};

}  // namespace aiscale::store
