// ChainBound: the oracle's interval bound as a Lagrangian dual over a chain of intervals
// (docs/oracle.md). Pure arithmetic over good counts the simulations produced.
//
// Interval m with n_m replicas costs n_m x billed_m replica-seconds and yields g_m(n_{m-1}, n_m)
// good requests: the pair value where one was simulated (both sizes inside the windows), else
// solo[n_m], the empty-start value, which is never below a pair value. The problem
//   min sum n_m x billed_m  subject to  sum g_m >= required
// is relaxed with a price lambda per good request: for each lambda, a Viterbi pass over the
// chain finds min sum (n_m x billed_m - lambda x g_m); that minimum + lambda x required is below
// every plan that meets `required` (weak duality), so the best such value over lambda is a
// lower bound. Lambda is found by bisection on whether the minimising plan meets `required`.
// Cost: O(sum_m (N_m + window pairs)) per lambda, about 100 lambdas.
#pragma once

#include <cstdint>
#include <vector>

namespace aiscale::sim::inference {

struct ChainInterval {
  std::vector<uint64_t> solo;  // g for n = 0..N (N = solo.size() - 1), empty start
  double billed_s = 0;         // seconds one replica is billed in this interval
  // Pair values for n_prev in the previous interval's window and n in this one's
  // (row-major by n_prev; empty when none were simulated, e.g. the first interval).
  int lo = 0, width = 0;  // this interval's window: n in [lo, lo + width)
  std::vector<uint64_t> pair;
};

struct ChainResult {
  double bound_replica_s = 0;  // the lower bound on sum n_m x billed_m
  std::vector<int> plan;       // the cheapest plan found that meets `required` (the relaxed
                               // problem's), for drawing
  double plan_good = 0;
  double plan_replica_s = 0;
};

// `required` <= sum of solo.back() over the intervals (what the largest sizes reach).
ChainResult ChainBound(const std::vector<ChainInterval>& chain, uint64_t required);

}  // namespace aiscale::sim::inference
