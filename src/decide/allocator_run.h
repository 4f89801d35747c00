// AllocatorRun: the working state of one Allocate() call (allocator.h), one method per rule.
// Internal to decide/; tests go through Allocate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "decide/allocator.h"

namespace aiscale::decide {

// v rounded to a multiple of `step` (> 0); non-positive v gives 0.
inline int64_t RoundDown(int64_t v, int64_t step) { return v <= 0 ? 0 : v / step * step; }
inline int64_t RoundUp(int64_t v, int64_t step) {
  return v <= 0 ? 0 : (v + step - 1) / step * step;
}

class AllocatorRun {
 public:
  explicit AllocatorRun(const AllocatorInput& in);

  void TakeVoluntaryShrinks();  // rule 1
  void FitToPool();             // rule 2
  void GrowWithinGuarantees();  // rule 3
  void GrowByBorrowing();       // rule 4
  Allocation Finish();

 private:
  // Who is asking for GPUs back, and from whom it may take them.
  struct Asker {
    size_t claim;  // kNone for the pool itself (rule 2)
    int tenant;    // -1: none (the pool)
    int priority;  // -1: above every class (the pool)
    bool owned;    // reclaiming its guarantee: any priority of other tenants' borrowed GPUs
  };
  // Where victims are looked for, in the order tried.
  enum class Tier { kBorrowed, kOwnTenant, kAnyTenant, kBelowFloors };
  struct Option {
    size_t victim;
    int to;
    int64_t freed;
    double cost;
  };
  static constexpr size_t kNone = static_cast<size_t>(-1);

  const PoolClaim& C(size_t i) const { return in_.claims[i]; }
  int64_t StepGpus(size_t i) const;
  int64_t Gpus(size_t i, int replicas) const;
  int64_t Excess(int t) const { return held_[t] - in_.tenants[t].guaranteed; }
  int64_t OwnedRoom(int t) const;
  int64_t BorrowRoom(int t) const;
  int64_t Ceiling(int t) const;  // the engine's quota for tenant t, else the pool
  bool WholeJob(size_t i) const;
  // GPUs claim i holds above its floor, in whole steps: what the pool may take short of it.
  int64_t AboveFloor(size_t i) const {
    return RoundDown(Gpus(i, grant_[i] - std::min(C(i).floor, grant_[i])), StepGpus(i));
  }
  // An owner reclaiming its guarantee may suspend elastic job `v` whole: its tenant borrows
  // more than all of its workloads hold above their floors, so the floors stand on borrowed
  // GPUs, and shrinking to floors alone would keep the owner from its guarantee for good.
  bool SuspendsForOwner(size_t v, const Asker& a, Tier tier) const;
  bool Wants(size_t i) const;  // wants more this tick and may ask
  bool Limited(int t) const;   // a borrow limit or quota binds before the pool does
  bool Eligible(size_t v, const Asker& a, Tier tier) const;
  int64_t Reducible(size_t v, const Asker& a, Tier tier) const;
  double Cost(size_t v, int to) const;

  void Give(size_t i, int64_t gpus);
  void Take(size_t v, int to, const Asker& a);
  // Gives claim `r` up to `gpus` more (a multiple of its step), from idle GPUs and then from
  // others as its tier allows; returns what it got.
  int64_t Obtain(size_t r, int64_t gpus, bool owned);
  // Frees up to `need` GPUs for `a` from the tiers it may take from; `apply` false only counts.
  int64_t Reclaim(const Asker& a, int64_t need, bool apply);
  int64_t ReclaimTier(const Asker& a, Tier tier, int64_t need);
  int64_t ReclaimElastic(const Asker& a, Tier tier, int64_t need);
  int64_t ReclaimOthers(const Asker& a, Tier tier, int64_t need);
  bool BestElastic(const Asker& a, Tier tier, int64_t need, Option& best) const;
  // What `a` could free in `tier` at most (a dry run of ReclaimTier), or some amount >= `enough`
  // once that is certain: an asker's Obtain needs no more, and a full count scans every claim.
  int64_t Available(const Asker& a, Tier tier,
                    int64_t enough = std::numeric_limits<int64_t>::max()) const;
  // Whether tier looks at tenant t's claims: the asker's tenant, the tenants lending, everyone.
  bool Looks(const Asker& a, Tier tier, int t) const;
  template <class F>
  void ForEachCandidate(const Asker& a, Tier tier, F&& visit) const {
    for (size_t t = 0; t < by_tenant_.size(); ++t) {
      if (!Looks(a, tier, static_cast<int>(t))) continue;
      for (size_t v : by_tenant_[t]) visit(v);
    }
  }
  std::string AskerName(const Asker& a) const;
  // GPUs beyond `need` the asker expects to want within a shrunk job's hold (PoolClaim::expected)
  // and may take: freed with the same restart when an elastic job must shrink anyway.
  int64_t ExpectedShort(const Asker& a) const;
  std::string PriorityName(int rank) const;

  void ShareIdle(const std::vector<size_t>& requests);
  void ShareWithinTenant(std::vector<size_t> requests, int64_t gpus);
  void ExplainGrowth(size_t i, Grant& g) const;
  void ExplainShortfall(size_t i, Grant& g) const;

  const AllocatorInput& in_;
  int64_t pool_;
  std::vector<int> grant_;
  std::vector<int64_t> held_;  // per tenant, GPUs
  int64_t free_ = 0;
  std::vector<std::vector<size_t>> by_tenant_;
  std::vector<int64_t> reclaimed_for_;   // per claim: GPUs taken from others for it
  std::vector<int64_t> borrowed_;        // per claim: GPUs grown beyond its tenant's guarantee
  std::vector<std::string> took_from_;   // per claim: "bert 8 GPUs, ..."
  std::vector<std::string> shrunk_for_;  // per claim that was shrunk: for whom and why
  std::vector<bool> capped_;             // per claim: stopped by its tenant's borrow room
  mutable std::vector<std::pair<int, double>> cost_cache_;  // per claim: (to, cost) last asked
  int64_t reclaimed_total_ = 0;
  int64_t elastic_idle_left_;  // AllocatorInput::elastic_idle, as elastic growth takes it
};

}  // namespace aiscale::decide
