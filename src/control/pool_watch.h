// PoolWatch: the shared GPU pool's size as the engine reports it, fetched off the tick thread
// like a signal (on the Collector's executor, with the same cadence), and read by the tick.
//
// Promises: Read says "unknown" (with why) when the source failed, never answered, or its last
// answer is older than `staleness`: missing data, on which the Controller holds everyone. A drop
// in the reported size takes effect only once every report for `shrink_grace` has been that low
// (a node flapping NotReady is not a reason to shrink a job); a rise takes effect at once. A
// reading counted with an older set of managed workloads (PoolSource::Basis) is unknown too, and
// the next RunDue reads again at once.
// Thread-safe: RunDue and Read may be called from different threads. The source must outlive
// every task started on the executor.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "control/executor.h"
#include "core/pool.h"
#include "core/time.h"

namespace aiscale::control {

struct PoolReading {
  std::optional<PoolCapacity> capacity;  // nullopt: unknown
  std::string note;                      // why unknown, or that a drop is being held
  // The readings span the shrink grace without a gap. Until they do (after a start or an
  // outage) a size below what is held may be a transient one that no earlier reading can
  // outweigh: the Controller does not shrink anyone for it.
  bool settled = true;
  double watched_s = 0;  // how long the readings have run without a gap
};

class PoolWatch {
 public:
  PoolWatch(PoolSource& source, Executor& executor, Duration interval, Duration staleness,
            Duration shrink_grace);
  void RunDue(TimePoint now);  // starts an Observe when one is due and none is running
  TimePoint NextDue() const;
  PoolReading Read(TimePoint now) const;

 private:
  struct State {
    mutable std::mutex mu;
    std::deque<std::pair<TimePoint, int64_t>> sizes;  // reports within the grace window
    std::optional<PoolCapacity> last;
    TimePoint last_at{};
    std::string error;                   // of the latest attempt; empty when it succeeded
    std::optional<TimePoint> run_start;  // the first reading since the last failure or gap
    bool in_flight = false;
    TimePoint next_due{};
  };
  static void Store(State& s, Result<PoolCapacity> got, TimePoint at, Duration grace);

  PoolSource& source_;
  Executor& executor_;
  Duration interval_, staleness_, grace_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace aiscale::control
