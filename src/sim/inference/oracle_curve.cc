#include "sim/inference/oracle_curve.h"

#include <algorithm>

#include "sim/inference/oracle_request.h"

namespace aiscale::sim::inference {

IntervalCurve::IntervalCurve(std::vector<traces::TraceRequest> reqs, int64_t start_ns,
                             int64_t end_ns, const EngineOptions& e)
    : reqs_(std::move(reqs)), start_ns_(start_ns), end_ns_(end_ns), e_(e) {
  for (const auto& r : reqs_) servable_ += Servable(r, e_);
}

uint64_t RelaxedGood(ServingEngine engine, const std::vector<traces::TraceRequest>& reqs,
                     int64_t start_ns, int64_t end_ns, const EngineOptions& e) {
  engine.CountFrom(start_ns);
  for (const auto& r : reqs) engine.Arrive(r);
  engine.AdvanceTo(end_ns - 1);  // everything that happens inside the interval
  const std::vector<traces::TraceRequest> waiting = engine.TakeQueue();
  engine.AdvanceTo(INT64_MAX);
  uint64_t good = engine.counted_within_slo();
  for (const auto& r : waiting) {
    if (r.arrival_ns >= start_ns) good += SoloWithinSlo(r, e, end_ns - r.arrival_ns);
  }
  return good;
}

IntervalCurve::Point IntervalCurve::At(int n) {
  if (reqs_.empty()) return {};
  if (auto it = memo_.find(n); it != memo_.end()) return it->second;
  ServingEngine engine(e_);
  engine.AdvanceTo(start_ns_);
  for (int i = 0; i < n; ++i) engine.AddReplica(start_ns_);
  Point p;
  p.relaxed = RelaxedGood(engine, reqs_, start_ns_, end_ns_, e_);
  // Without help, the same replicas go on to serve the waiting requests.
  for (const auto& r : reqs_) engine.Arrive(r);
  engine.AdvanceTo(INT64_MAX);
  p.alone = engine.stats().within_slo();
  // Help at the boundary never makes a request worse off; a batching anomaly that would say
  // otherwise must not let the relaxation fall below the real thing.
  p.relaxed = std::max(p.relaxed, p.alone);
  memo_.emplace(n, p);
  return p;
}

std::vector<uint64_t> IntervalCurve::RelaxedCurve() {
  std::vector<uint64_t> g;
  const int cap = static_cast<int>(reqs_.size());
  for (int n = 0; n <= cap; ++n) {
    g.push_back(At(n).relaxed);
    if (g.back() >= servable_) break;
  }
  return g;
}

int IntervalCurve::SmallestAlone(uint64_t want) {
  if (want == 0) return 0;
  const int cap = static_cast<int>(reqs_.size());
  // Doubling, then bisection: `alone` grows with n (checked at the cap, where every request
  // runs by itself).
  int hi = 1;
  while (hi < cap && At(hi).alone < want) hi = std::min(cap, hi * 2);
  int lo = hi / 2;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (At(mid).alone >= want ? hi : lo) = mid;
  }
  return hi;
}

std::vector<uint64_t> PairGoods(const std::vector<traces::TraceRequest>& prev,
                                int64_t prev_start_ns, int prev_lo, int prev_width,
                                const std::vector<traces::TraceRequest>& reqs, int64_t start_ns,
                                int64_t end_ns, int lo, int width, const EngineOptions& e) {
  std::vector<uint64_t> out;
  out.reserve(static_cast<size_t>(prev_width) * static_cast<size_t>(width));
  for (int np = prev_lo; np < prev_lo + prev_width; ++np) {
    ServingEngine carry(e);
    carry.AdvanceTo(prev_start_ns);
    for (int i = 0; i < np; ++i) carry.AddReplica(prev_start_ns);
    for (const auto& r : prev) carry.Arrive(r);
    carry.AdvanceTo(start_ns - 1);
    carry.TakeQueue();
    // Ready replicas, busiest first: the ones to remove when interval m has fewer.
    std::vector<ReplicaView> views = carry.Replicas();
    std::stable_sort(views.begin(), views.end(), [](const ReplicaView& a, const ReplicaView& b) {
      return a.in_flight > b.in_flight;
    });
    for (int n = lo; n < lo + width; ++n) {
      ServingEngine engine = carry;
      engine.AdvanceTo(start_ns);
      for (int i = np; i < n; ++i) engine.AddReplica(start_ns);
      for (int i = 0; i < np - n; ++i) engine.RemoveReplica(views[static_cast<size_t>(i)].id);
      out.push_back(RelaxedGood(std::move(engine), reqs, start_ns, end_ns, e));
    }
  }
  return out;
}

}  // namespace aiscale::sim::inference
