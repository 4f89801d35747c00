// The shared pool's allocator at scale (issue 23's target: one tick with 10,000 workloads in 100
// tenants <= 20 ms on one core). A pool of 10,000 workloads, seeded: half serving (1 GPU a
// replica), a third elastic training (8 GPUs a node, shrinkable to half), the rest batch; each
// tenant guaranteed its share. Every tick a fifth of the serving workloads peak past what
// they hold, so owners take GPUs back from borrowers and serving from training: the reclaim
// paths run, not only the quiet ones. Items are ticks; time per iteration is one Allocate.
//
//   taskset -c 0 ./build/allocator_bench --benchmark_filter=BM_Allocate
#include <random>

#include <benchmark/benchmark.h>

#include "decide/allocator.h"

namespace aiscale::decide {
namespace {

struct Pool {
  AllocatorInput in;
  std::vector<std::string> names;
};

Pool MakePool(int workloads, int tenants, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> kind(0, 5), size(1, 8);
  Pool p;
  p.names.reserve(static_cast<size_t>(workloads));
  for (int i = 0; i < workloads; ++i) p.names.push_back("w" + std::to_string(i));
  int64_t held = 0;
  for (int i = 0; i < workloads; ++i) {
    PoolClaim c;
    c.name = p.names[static_cast<size_t>(i)];
    c.tenant = i % tenants;
    const int k = kind(rng);
    const bool serving = k < 3, training = k >= 3 && k < 5;
    c.priority = serving ? 0 : (training ? 1 : 2);
    c.gpus_per_replica = training ? 8 : 1;
    c.current = size(rng);
    c.want = c.current;
    c.floor = training ? std::max(1, c.current / 2) : 1;
    c.elastic = training;
    held += int64_t{c.current} * c.gpus_per_replica;
    p.in.claims.push_back(c);
  }
  const int64_t pool = held + held / 20;  // 5% idle before the peaks
  for (int t = 0; t < tenants; ++t) {
    p.in.tenants.push_back({"t" + std::to_string(t), pool / tenants / 2, std::nullopt, 1.0});
  }
  p.in.pool_gpus = pool;
  p.in.priorities = {"serving", "training", "batch"};
  p.in.shrink_cost = [](size_t i, int to) { return static_cast<double>((i % 7 + 1) * (8 - to)); };
  // A fifth of the serving workloads peak at twice their size.
  for (size_t i = 0; i < p.in.claims.size(); i += 5) {
    if (p.in.claims[i].priority == 0) p.in.claims[i].want = 2 * p.in.claims[i].current;
  }
  return p;
}

void BM_Allocate(benchmark::State& state) {
  const Pool p = MakePool(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 23);
  int64_t reclaimed = 0;
  for (auto _ : state) {
    Allocation a = Allocate(p.in);
    reclaimed = a.reclaimed_gpus;
    // Checksums of the grants and their reasons: a faster allocator must give the same answer.
    double h = 0;
    size_t dh = 0;
    for (size_t i = 0; i < a.grants.size(); ++i) {
      h += static_cast<double>((i % 97 + 1) * a.grants[i].replicas);
      dh = dh * 31 + std::hash<std::string>{}(a.grants[i].detail);
    }
    state.counters["reasons_hash"] = static_cast<double>(dh % 1000003);
    state.counters["grants_sum"] = h;
    benchmark::DoNotOptimize(a);
  }
  state.counters["reclaimed_gpus"] = static_cast<double>(reclaimed);
  state.counters["workloads"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_Allocate)
    ->Args({1000, 10})
    ->Args({10000, 100})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace aiscale::decide

BENCHMARK_MAIN();
