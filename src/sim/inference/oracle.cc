#include "sim/inference/oracle.h"

#include <algorithm>
#include <cmath>

#include "core/numeric.h"
#include "sim/inference/oracle_chain.h"
#include "sim/inference/oracle_curve.h"
#include "sim/inference/oracle_request.h"

namespace aiscale::sim::inference {
namespace {

// Pair values are simulated for sizes within this many of the decomposed plan's, around each
// boundary; elsewhere the empty-start values stand (never below the pair values).
constexpr int kPairReach = 3;

uint64_t CeilShare(double share, uint64_t n) {
  return static_cast<uint64_t>(std::ceil(share * static_cast<double>(n)));
}

// The sum of the `k` smallest values.
double SumSmallest(std::vector<float>& v, uint64_t k) {
  k = std::min<uint64_t>(k, v.size());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  double s = 0;
  for (uint64_t i = 0; i < k; ++i) s += v[i];
  return s;
}

struct Interval {
  std::vector<traces::TraceRequest> reqs;
  int64_t start_ns = 0;
};

// Simulates pair values around `plan` into the chain (oracle_chain.h).
void AddPairs(const std::vector<Interval>& iv, int64_t interval_ns, const std::vector<int>& plan,
              const EngineOptions& e, std::vector<ChainInterval>& chain) {
  for (size_t m = 0; m < chain.size(); ++m) {
    std::vector<uint64_t>& solo = chain[m].solo;
    chain[m].lo = std::max(0, plan[m] - kPairReach);
    const int hi = plan[m] + kPairReach;
    // The largest size stays outside the window, at the empty-start value (every servable
    // request): a plan that serves everything must exist whatever the earlier interval carries.
    while (static_cast<int>(solo.size()) <= hi + 1) solo.push_back(solo.back());
    chain[m].width = hi - chain[m].lo + 1;
  }
  for (size_t m = 1; m < chain.size(); ++m) {
    if (iv[m].reqs.empty() || iv[m - 1].reqs.empty()) continue;  // nothing carried or served
    chain[m].pair = PairGoods(iv[m - 1].reqs, iv[m - 1].start_ns, chain[m - 1].lo,
                              chain[m - 1].width, iv[m].reqs, iv[m].start_ns,
                              iv[m].start_ns + interval_ns, chain[m].lo, chain[m].width, e);
  }
}

}  // namespace

uint64_t GoodWithReplicas(const std::vector<traces::TraceRequest>& reqs, int n,
                          const EngineOptions& engine) {
  ServingEngine e(engine);
  for (int i = 0; i < n; ++i) e.AddReplica(0);
  for (const auto& r : reqs) e.Arrive(r);
  e.AdvanceTo(INT64_MAX);
  return e.stats().within_slo();
}

Result<OracleResult> ComputeOracle(traces::RequestStream& stream, const OracleOptions& o) {
  OracleResult res;
  res.interval_s = o.interval_s;
  // An interval that rounds to 0 ns (or overflows) would never close: refuse it here too,
  // not only in the scenario parser.
  if (!(o.interval_s >= 1e-3 && o.interval_s <= 1e9)) {
    return Status::Error("oracle interval " + std::to_string(o.interval_s) +
                         " s is outside [0.001, 1e9] s");
  }
  const int64_t interval_ns = SaturatingNanos(o.interval_s);
  const double target = o.engine.slo.attainment;

  // Pass 1: cut into intervals; per interval its empty-start curve, static-peak size and
  // unservable requests; per request its least busy time.
  std::vector<Interval> iv;
  std::vector<ChainInterval> chain;
  std::vector<float> busy_s;  // MinBusySeconds of every servable request
  std::vector<traces::TraceRequest> buf;
  Interval cur;
  int64_t last_arrival = 0;
  auto close_interval = [&]() {
    IntervalCurve c(cur.reqs, cur.start_ns, cur.start_ns + interval_ns, o.engine);
    const uint64_t want = std::min(c.servable(), CeilShare(target, c.size()));
    const int n_target = c.SmallestAlone(want);
    if (iv.empty()) res.first_interval_replicas = n_target;
    if (n_target > res.static_peak_replicas) {
      res.static_peak_replicas = n_target;
      res.peak_interval = static_cast<int>(iv.size());
    }
    res.arrivals.push_back(static_cast<uint32_t>(c.size()));
    res.unservable += c.size() - c.servable();
    chain.push_back({c.RelaxedCurve(), o.interval_s, 0, 0, {}});
    iv.push_back(std::move(cur));
    cur = Interval{{}, iv.back().start_ns + interval_ns};
  };
  bool ended = false;  // arrivals come in time order: one past until_ns ends the input
  while (!ended) {
    buf.clear();
    RETURN_IF_ERROR(stream.Next(buf, 1 << 14));
    if (buf.empty()) break;
    for (const auto& r : buf) {
      if (r.arrival_ns >= o.until_ns) {
        ended = true;
        break;
      }
      while (r.arrival_ns >= cur.start_ns + interval_ns) close_interval();
      cur.reqs.push_back(r);
      last_arrival = r.arrival_ns;
      ++res.requests;
      if (Servable(r, o.engine)) busy_s.push_back(static_cast<float>(MinBusySeconds(r, o.engine)));
    }
  }
  if (!cur.reqs.empty()) close_interval();
  // Every run lasts at least until the last arrival, not to the end of its interval.
  if (!chain.empty()) {
    chain.back().billed_s = static_cast<double>(last_arrival - iv.back().start_ns) / 1e9;
  }

  const uint64_t servable = res.requests - res.unservable;
  res.feasible = servable >= CeilShare(target, res.requests);
  res.required = std::min(servable, CeilShare(target, res.requests));
  // Pass 2: the bound with empty starts only, then again with what each interval carries
  // into the next, simulated around the first pass's plan.
  const ChainResult first = ChainBound(chain, res.required);
  AddPairs(iv, interval_ns, first.plan, o.engine, chain);
  const ChainResult chained = ChainBound(chain, res.required);
  res.replicas = chained.plan;
  res.good = chained.plan_good;
  res.attainment = res.requests ? res.good / static_cast<double>(res.requests) : 1;
  const double gpus = o.engine.model.gpus_per_replica;
  res.interval_gpu_hours = std::max(first.bound_replica_s, chained.bound_replica_s) * gpus / 3600.0;
  res.work_gpu_hours = SumSmallest(busy_s, res.required) * gpus / 3600.0;
  res.gpu_hours = std::max(res.interval_gpu_hours, res.work_gpu_hours);
  res.bound = res.work_gpu_hours > res.interval_gpu_hours ? "work" : "interval";
  return res;
}

}  // namespace aiscale::sim::inference
