#include "sim/inference/oracle_chain.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aiscale::sim::inference {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// g_m(n_prev, n): the pair value when simulated, else the empty-start value.
double Good(const ChainInterval& prev, const ChainInterval& cur, int n_prev, int n) {
  const bool in_prev = n_prev >= prev.lo && n_prev < prev.lo + prev.width;
  const bool in_cur = n >= cur.lo && n < cur.lo + cur.width;
  if (!cur.pair.empty() && in_prev && in_cur) {
    return static_cast<double>(
        cur.pair[static_cast<size_t>((n_prev - prev.lo) * cur.width + (n - cur.lo))]);
  }
  return static_cast<double>(cur.solo[static_cast<size_t>(n)]);
}

struct Pass {
  double value = 0;  // min sum (cost - lambda x good)
  double good = 0, cost = 0;
  std::vector<int> plan;
};

// One Viterbi pass at price `lambda`.
Pass Viterbi(const std::vector<ChainInterval>& chain, double lambda) {
  std::vector<std::vector<int>> from(chain.size());
  std::vector<double> best, next;
  for (size_t m = 0; m < chain.size(); ++m) {
    const ChainInterval& cur = chain[m];
    const int top = static_cast<int>(cur.solo.size()) - 1;
    next.assign(static_cast<size_t>(top) + 1, kInf);
    from[m].assign(static_cast<size_t>(top) + 1, 0);
    if (m == 0) {
      for (int n = 0; n <= top; ++n) {
        next[static_cast<size_t>(n)] = n * cur.billed_s - lambda * static_cast<double>(cur.solo[n]);
      }
    } else {
      const ChainInterval& prev = chain[m - 1];
      // Outside the previous window every n_prev sees the same (empty-start) value: only the
      // cheapest of them matters.
      int out_arg = -1;
      for (int np = 0; np < static_cast<int>(best.size()); ++np) {
        if (np >= prev.lo && np < prev.lo + prev.width && !cur.pair.empty()) continue;
        if (out_arg < 0 || best[static_cast<size_t>(np)] < best[static_cast<size_t>(out_arg)]) {
          out_arg = np;
        }
      }
      for (int n = 0; n <= top; ++n) {
        const double own = n * cur.billed_s;
        double v = kInf;
        int arg = 0;
        auto consider = [&](int np) {
          const double c = best[static_cast<size_t>(np)] + own - lambda * Good(prev, cur, np, n);
          if (c < v) {
            v = c;
            arg = np;
          }
        };
        if (out_arg >= 0) consider(out_arg);
        if (!cur.pair.empty()) {
          const int hi = std::min(prev.lo + prev.width, static_cast<int>(best.size()));
          for (int np = prev.lo; np < hi; ++np) consider(np);
        }
        next[static_cast<size_t>(n)] = v;
        from[m][static_cast<size_t>(n)] = arg;
      }
    }
    best.swap(next);
  }
  Pass p;
  if (chain.empty()) return p;
  int n = static_cast<int>(std::min_element(best.begin(), best.end()) - best.begin());
  p.value = best[static_cast<size_t>(n)];
  p.plan.assign(chain.size(), 0);
  for (size_t m = chain.size(); m-- > 0;) {
    p.plan[m] = n;
    n = from[m][static_cast<size_t>(n)];
  }
  for (size_t m = 0; m < chain.size(); ++m) {
    p.cost += p.plan[m] * chain[m].billed_s;
    p.good += m == 0 ? static_cast<double>(chain[0].solo[static_cast<size_t>(p.plan[0])])
                     : Good(chain[m - 1], chain[m], p.plan[m - 1], p.plan[m]);
  }
  return p;
}

}  // namespace

ChainResult ChainBound(const std::vector<ChainInterval>& chain, uint64_t required) {
  ChainResult res;
  const double need = static_cast<double>(required);
  double best_bound = 0;  // lambda = 0 gives the empty plan's cost, 0
  bool have_plan = false;
  auto evaluate = [&](double lambda) {
    const Pass p = Viterbi(chain, lambda);
    best_bound = std::max(best_bound, p.value + lambda * need);
    if (p.good >= need && (!have_plan || p.cost < res.plan_replica_s)) {
      have_plan = true;
      res.plan = p.plan;
      res.plan_good = p.good;
      res.plan_replica_s = p.cost;
    }
    return p.good >= need;
  };
  if (required == 0) {
    evaluate(0);
  } else {
    // Geometric bisection on lambda (replica-seconds per good request).
    double lo = 1e-9, hi = 1e12;
    evaluate(hi);  // prices every request above any size's cost: the largest plan
    for (int i = 0; i < 100 && hi / lo > 1 + 1e-9; ++i) {
      const double mid = std::sqrt(lo * hi);
      (evaluate(mid) ? hi : lo) = mid;
    }
  }
  res.bound_replica_s = best_bound;
  return res;
}

}  // namespace aiscale::sim::inference
