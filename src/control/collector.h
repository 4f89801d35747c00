// Collector: fetches every workload's signals, each on its own interval and with its own
// deadline, into snapshots the Controller's tick reads. The tick never waits on the network.
//
// How: RunDue(now) starts every fetch that is due, one FetchBatch per source (so a source that
// can answer many workloads with one request, like a Prometheus query template, does), on the
// injected Executor, and returns. A source whose previous batch is still running is not asked
// again; once that batch is past its deadline, its signals read as kDeadlineExceeded (missing
// data: never a scale-down) while every other source's signals stay fresh. Under the simulator
// the executor is inline, so a collection is a queue event on the same code path.
// Thread-safe: RunDue, NextDue and Read may be called from different threads, and so may Add and
// Remove (workloads added and removed at run time: AIScalers on Kubernetes). Sources must outlive
// every task started on the executor. A fetched result is immutable once stored and shared with
// every reader (Reading), so a tick reads 10,000 workloads' observations without copying them; the
// readings of one batch share one allocation, which lives until the last of them is replaced or
// released.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "control/executor.h"
#include "core/metric_source.h"
#include "core/telemetry.h"

namespace aiscale::control {

struct CollectSignal {
  std::string signal;      // canonical name
  std::string expression;  // passed to the source; may be empty
  MetricSource* source = nullptr;
  Duration interval = Seconds(15);
  Duration timeout = Seconds(5);
  Duration max_age{};  // MetricQuery::max_age: the workload's staleness
};

// One signal's latest result as Read hands it out: shared, never modified after the fetch.
using Reading = std::shared_ptr<const FetchResult>;

class Collector {
 public:
  // `telemetry` may be null.
  Collector(Executor& executor, Telemetry* telemetry);

  // Registers one workload's signals; returns its id for Read.
  size_t Add(const WorkloadRef& ref, const std::vector<CollectSignal>& signals);
  // Forgets workload `id`'s signals: none of them is fetched again, a fetch of them still in
  // flight is dropped when it ends, and the id and slots are reused by a later Add.
  void Remove(size_t id);
  // Starts every fetch due at `now` and returns without waiting for them.
  void RunDue(TimePoint now);
  // The earliest time a fetch that can start is due (TimePoint::max() when none can: nothing
  // registered, or every source busy); the daemon re-checks often enough for a busy source.
  TimePoint NextDue() const;
  // The latest result for each of workload `id`'s signals, in the order given to Add: the
  // observations of the newest completed fetch (shared with the slot, not copied), or why
  // there are none. Never null.
  std::vector<Reading> Read(size_t id, TimePoint now) const;
  // Fetches started and not yet finished (for tests and shutdown).
  size_t InFlight() const;

 private:
  struct Slot {
    CollectSignal sig;
    MetricQuery query;
    TimePoint next_due{};
    bool in_flight = false;
    bool late_counted = false;
    TimePoint started{};
    Reading last;  // null until a fetch completes
    bool removed = false;
    // Bumped when the slot is freed: a batch started before carries the old value, and its
    // result is dropped rather than stored in the slot's next occupant.
    uint64_t generation = 0;
  };
  using Queries = std::shared_ptr<const std::vector<MetricQuery>>;
  // The queries a source was last asked: reused while the same slots are due together (every
  // round, for signals sharing an interval), so a round copies no query.
  struct SentBatch {
    std::vector<size_t> slots;
    Queries queries;
  };
  struct State {
    mutable std::mutex mu;
    std::vector<Slot> slots;
    std::vector<std::vector<size_t>> by_workload;  // workload id -> slot indices
    std::vector<size_t> free_slots, free_ids;      // freed by Remove, reused by Add
    std::map<MetricSource*, bool> busy;            // a batch of this source is running
    std::map<MetricSource*, SentBatch> sent;
  };
  // The queries for `due` (slot indices, in order), from the last batch when it asked the same.
  static Queries QueriesFor(State& state, MetricSource* source, const std::vector<size_t>& due);
  static void RunBatch(const std::shared_ptr<State>& state, Telemetry* telemetry,
                       MetricSource* source, std::vector<size_t> slots,
                       std::vector<uint64_t> generations, Queries queries, TimePoint now);
  Reading ReadSlot(Slot& s, TimePoint now) const;

  Executor& executor_;
  Telemetry* telemetry_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace aiscale::control
