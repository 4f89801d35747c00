// IntervalCurve: good(n) for the requests of one oracle interval, under the oracle's
// relaxation (docs/oracle.md), and the upper concave envelope the pooling step works on.
//
// The relaxation, which no schedule of n replicas over the interval can beat: the interval
// starts empty (no backlog from before), n replicas are ready at its start, and at its end
// the requests still waiting are each taken by an empty replica of their own (the next
// interval's help, unbilled here); requests in flight finish on their replicas. `Alone` is the
// same without that help (the interval's n replicas serve everything that arrived in it), the
// size a static run needs for the interval, for static-peak.
// Requests keep their absolute arrival times, so a plain server's service draws do not depend
// on where the intervals fall. Not thread-safe; memoized per n.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "sim/inference/serving_engine.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::inference {

class IntervalCurve {
 public:
  // `reqs` arrive in [start_ns, end_ns), in time order.
  IntervalCurve(std::vector<traces::TraceRequest> reqs, int64_t start_ns, int64_t end_ns,
                const EngineOptions& e);

  struct Point {
    uint64_t relaxed = 0;  // good requests with the end-of-interval help
    uint64_t alone = 0;    // good requests without it
  };
  Point At(int n);
  size_t size() const { return reqs_.size(); }
  // Requests some size serves within the SLO (oracle_request.h): what good(n) reaches.
  uint64_t servable() const { return servable_; }
  // relaxed good for n = 0, 1, ..., N, where N is the first size at which it reaches
  // servable() (at most size(): with a replica per request every request runs alone).
  std::vector<uint64_t> RelaxedCurve();
  // The fewest replicas whose `alone` good reaches `want` (at most size()).
  int SmallestAlone(uint64_t want);

 private:
  std::vector<traces::TraceRequest> reqs_;
  int64_t start_ns_, end_ns_;
  const EngineOptions& e_;
  uint64_t servable_ = 0;
  std::map<int, Point> memo_;
};

// Serves `reqs` (arriving in [start_ns, end_ns)) on `engine`, which is at start_ns with its
// replicas already there (and perhaps an earlier interval's requests in flight); at end_ns each
// request still waiting gets an empty replica of its own. Returns the good requests among
// those that arrived from start_ns on.
uint64_t RelaxedGood(ServingEngine engine, const std::vector<traces::TraceRequest>& reqs,
                     int64_t start_ns, int64_t end_ns, const EngineOptions& e);

// Good requests of interval m (`reqs`, [start_ns, end_ns)) when the interval before it
// (`prev`, from prev_start_ns) ran with n_prev replicas from an empty start and interval m runs
// with n replicas: the earlier requests still in flight at the boundary stay on their replicas
// (which keep serving them if removed), those still waiting leave (someone else's help). For
// n_prev in [prev_lo, prev_lo + prev_width) and n in [lo, lo + width); row-major by n_prev.
// Removed replicas are the busiest (the best case for interval m).
std::vector<uint64_t> PairGoods(const std::vector<traces::TraceRequest>& prev,
                                int64_t prev_start_ns, int prev_lo, int prev_width,
                                const std::vector<traces::TraceRequest>& reqs, int64_t start_ns,
                                int64_t end_ns, int lo, int width, const EngineOptions& e);

}  // namespace aiscale::sim::inference
