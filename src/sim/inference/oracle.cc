#include "sim/inference/oracle.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

#include "core/numeric.h"

namespace aiscale::sim::inference {
namespace {

// good_m(n) with memo, for one interval.
class IntervalCurve {
 public:
  IntervalCurve(std::vector<traces::TraceRequest> reqs, const EngineOptions& e)
      : reqs_(std::move(reqs)), e_(e) {}
  uint64_t Good(int n) {
    if (n <= 0 || reqs_.empty()) return 0;
    auto it = memo_.find(n);
    if (it != memo_.end()) return it->second;
    const uint64_t g = GoodWithReplicas(reqs_, n, e_);
    memo_.emplace(n, g);
    return g;
  }
  size_t size() const { return reqs_.size(); }
  // Smallest n with Good(n) >= want, searching up to cap (doubling, then bisection). Returns
  // cap + 1 when even cap misses.
  int Smallest(uint64_t want, int cap) {
    if (want == 0) return 0;
    int hi = 1;
    while (Good(hi) < want) {
      if (hi >= cap) return cap + 1;
      hi = std::min(cap, hi * 2);
    }
    int lo = hi / 2;  // Good(lo) < want or lo == 0
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      (Good(mid) >= want ? hi : lo) = mid;
    }
    return hi;
  }
  // The most good requests any size reaches: stops doubling when doubling gains nothing.
  uint64_t MaxGood(int cap) {
    int n = 1;
    uint64_t g = Good(1);
    while (g < reqs_.size() && n < cap) {
      const int next = std::min(cap, n * 2);
      const uint64_t gn = Good(next);
      if (gn == g) break;
      n = next;
      g = gn;
    }
    return g;
  }

 private:
  std::vector<traces::TraceRequest> reqs_;
  const EngineOptions& e_;
  std::map<int, uint64_t> memo_;
};

}  // namespace

uint64_t GoodWithReplicas(const std::vector<traces::TraceRequest>& reqs, int n,
                          const EngineOptions& engine) {
  ServingEngine e(engine);
  for (int i = 0; i < n; ++i) e.AddReplica(0);
  for (const auto& r : reqs) e.Arrive(r);
  e.AdvanceTo(INT64_MAX);
  return e.stats().within_slo();
}

double MinBusySeconds(const traces::TraceRequest& r, const ReplicaModel& m) {
  if (m.kind == ReplicaModel::Kind::kLlm) {
    // Prefill runs inside steps one replica takes one at a time; a token costs at least a
    // full batch's share of a step (base / max_batch + per_seq).
    const double per_token = m.llm.decode_base_s / m.llm.max_batch + m.llm.decode_per_seq_s;
    return r.input_tokens * m.llm.prefill_s_per_token + r.output_tokens * per_token;
  }
  // The mean service time (the draws average to it), shared by `concurrency` slots.
  return (m.plain.mean_s + r.output_tokens * m.plain.per_output_token_s) / m.plain.concurrency;
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

  // Pass 1: per interval, the size that gets every achievable good request (N_m) and the
  // size that meets the target inside the interval (for static-peak).
  std::vector<IntervalCurve> curves;
  std::vector<int> full;  // N_m
  std::vector<traces::TraceRequest> buf, cur;
  int64_t cur_start = 0;
  uint64_t good_full = 0;
  double work_s = 0;  // replica-seconds the requests need at the least (MinBusySeconds)
  auto close_interval = [&]() {
    IntervalCurve c(std::move(cur), o.engine);
    cur.clear();
    const uint64_t max_good = c.MaxGood(o.max_replicas);
    const int n_full = c.Smallest(max_good, o.max_replicas);
    const uint64_t want = std::min<uint64_t>(
        max_good, static_cast<uint64_t>(std::ceil(target * static_cast<double>(c.size()))));
    const int n_target = c.Smallest(want, o.max_replicas);
    if (curves.empty()) res.first_interval_replicas = n_target;
    if (n_target > res.static_peak_replicas) {
      res.static_peak_replicas = n_target;
      res.peak_interval = static_cast<int>(curves.size());
    }
    res.arrivals.push_back(static_cast<uint32_t>(c.size()));
    good_full += max_good;
    full.push_back(n_full);
    curves.push_back(std::move(c));
  };
  while (true) {
    buf.clear();
    RETURN_IF_ERROR(stream.Next(buf, 1 << 14));
    if (buf.empty()) break;
    for (const auto& r : buf) {
      while (r.arrival_ns >= cur_start + interval_ns) {
        close_interval();
        cur_start += interval_ns;
      }
      traces::TraceRequest rel = r;
      rel.arrival_ns -= cur_start;
      cur.push_back(rel);
      ++res.requests;
      work_s += MinBusySeconds(r, o.engine.model);
    }
  }
  if (!cur.empty()) close_interval();

  // Pass 2: pool the SLO budget. Start from N_m everywhere and remove, one at a time, the
  // replica whose removal loses the fewest good requests while the total stays >= target.
  res.replicas = full;
  // Requests no size serves within the SLO (a prompt whose prefill alone is over the TTFT
  // limit) are misses every policy pays, so the target applies to the achievable ones:
  // good >= attainment x good_full. Identical to attainment x requests when every request
  // is achievable, and monotone in the target (a rule that switched bases at the edge of
  // feasibility would let a lower target cost more).
  res.feasible =
      good_full >= static_cast<uint64_t>(std::ceil(target * static_cast<double>(res.requests)));
  const uint64_t required =
      static_cast<uint64_t>(std::ceil(target * static_cast<double>(good_full)));
  uint64_t good = good_full;
  {
    using Cand = std::pair<uint64_t, size_t>;  // (loss, interval)
    std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
    auto push = [&](size_t m) {
      const int n = res.replicas[m];
      if (n > 0)
        heap.push({curves[m].Good(n) - std::min(curves[m].Good(n), curves[m].Good(n - 1)), m});
    };
    for (size_t m = 0; m < curves.size(); ++m) push(m);
    while (!heap.empty()) {
      const auto [loss, m] = heap.top();
      heap.pop();
      if (good - loss < required) break;  // the cheapest removal left breaks the target
      good -= loss;
      --res.replicas[m];
      push(m);
    }
  }
  res.good = good;
  res.attainment = res.requests ? static_cast<double>(good) / static_cast<double>(res.requests) : 1;
  double replica_intervals = 0;
  for (const int n : res.replicas) replica_intervals += n;
  const double gpus = o.engine.model.gpus_per_replica;
  res.interval_gpu_hours = replica_intervals * o.interval_s * gpus / 3600.0;
  res.work_gpu_hours = work_s * gpus / 3600.0;
  res.gpu_hours = std::max(res.interval_gpu_hours, res.work_gpu_hours);
  return res;
}

}  // namespace aiscale::sim::inference
