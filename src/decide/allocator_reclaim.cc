// AllocatorRun's reclaims: which workloads give GPUs back for whom, cheapest source first.
#include <algorithm>
#include <limits>

#include "decide/allocator_run.h"

namespace aiscale::decide {
bool AllocatorRun::Eligible(size_t v, const Asker& a, Tier tier) const {
  if (v == a.claim || grant_[v] <= 0) return false;
  const PoolClaim& c = C(v);
  switch (tier) {
    case Tier::kBorrowed:
      return c.tenant != a.tenant && Excess(c.tenant) > 0 && (a.owned || c.priority > a.priority);
    case Tier::kOwnTenant:
      return c.tenant == a.tenant && c.priority > a.priority;
    case Tier::kAnyTenant:
    case Tier::kBelowFloors:
      return a.claim == kNone;  // only the pool itself, when it shrank
  }
  return false;
}

// GPUs `v` may give `a` in `tier`: down to its floor (to nothing for a whole-job suspension or
// below floors), and from a lending tenant no more than it borrowed (an owner may take the
// borrower's last partial step: the borrower pays for its borrowing, not the owner).
int64_t AllocatorRun::Reducible(size_t v, const Asker& a, Tier tier) const {
  const PoolClaim& c = C(v);
  const int64_t step = StepGpus(v);
  int64_t r;
  if (WholeJob(v) || tier == Tier::kBelowFloors) {
    r = WholeJob(v) ? Gpus(v, grant_[v]) : RoundDown(Gpus(v, grant_[v]), step);
  } else {
    r = AboveFloor(v);
  }
  if (tier == Tier::kBorrowed) {
    if (SuspendsForOwner(v, a, tier)) return Gpus(v, grant_[v]);
    const int64_t limit =
        a.owned ? RoundUp(Excess(c.tenant), step) : RoundDown(Excess(c.tenant), step);
    if (WholeJob(v)) return (a.owned && limit > 0) || limit >= r ? r : 0;
    r = std::min(r, limit);
  }
  return std::max<int64_t>(0, r);
}

bool AllocatorRun::SuspendsForOwner(size_t v, const Asker& a, Tier tier) const {
  const PoolClaim& c = C(v);
  if (tier != Tier::kBorrowed || !a.owned || a.claim == kNone || !c.elastic || WholeJob(v) ||
      grant_[v] <= 0 || c.floor <= 0) {
    return false;
  }
  int64_t above_floors = 0;
  for (size_t w : by_tenant_[c.tenant]) {
    above_floors += AboveFloor(w);
  }
  return Excess(c.tenant) > above_floors;
}

double AllocatorRun::Cost(size_t v, int to) const {
  if (to >= C(v).current) return 0;
  if (!in_.shrink_cost) return static_cast<double>(Gpus(v, C(v).current - to));
  std::pair<int, double>& cached = cost_cache_[v];
  if (cached.first != to) cached = {to, std::max(0.0, in_.shrink_cost(v, to))};
  return cached.second;
}

bool AllocatorRun::Looks(const Asker& a, Tier tier, int t) const {
  switch (tier) {
    case Tier::kOwnTenant:
      return t == a.tenant;
    case Tier::kBorrowed:
      return t != a.tenant && Excess(t) > 0;
    case Tier::kAnyTenant:
    case Tier::kBelowFloors:
      return true;
  }
  return false;
}

int64_t AllocatorRun::Reclaim(const Asker& a, int64_t need, bool apply) {
  static constexpr Tier kClaimTiers[] = {Tier::kBorrowed, Tier::kOwnTenant};
  static constexpr Tier kPoolTiers[] = {Tier::kBorrowed, Tier::kAnyTenant, Tier::kBelowFloors};
  int64_t got = 0;
  const bool pool = a.claim == kNone;
  for (Tier tier : pool ? std::vector<Tier>(std::begin(kPoolTiers), std::end(kPoolTiers))
                        : std::vector<Tier>(std::begin(kClaimTiers), std::end(kClaimTiers))) {
    if (got >= need) break;
    got += apply ? ReclaimTier(a, tier, need - got) : Available(a, tier);
  }
  return std::min(got, need);
}

int64_t AllocatorRun::ReclaimTier(const Asker& a, Tier tier, int64_t need) {
  int64_t got = tier == Tier::kBelowFloors ? 0 : ReclaimElastic(a, tier, need);
  if (got < need) got += ReclaimOthers(a, tier, need - got);
  return got;
}

int64_t AllocatorRun::Available(const Asker& a, Tier tier, int64_t enough) const {
  int64_t total = 0;
  for (size_t t = 0; t < by_tenant_.size() && total < enough; ++t) {
    if (!Looks(a, tier, static_cast<int>(t))) continue;
    // A lending tenant gives no more than it borrowed, however many of its workloads could.
    const int64_t limit =
        tier == Tier::kBorrowed ? Excess(static_cast<int>(t)) : std::numeric_limits<int64_t>::max();
    int64_t per = 0;
    for (size_t v : by_tenant_[t]) {
      if (per >= limit) break;
      if (Eligible(v, a, tier)) per += Reducible(v, a, tier);
    }
    total += std::min(per, limit);
  }
  return total;
}

bool AllocatorRun::BestElastic(const Asker& a, Tier tier, int64_t need, Option& best) const {
  bool found = false, best_covers = false;
  ForEachCandidate(a, tier, [&](size_t v) {
    if (!C(v).elastic || !Eligible(v, a, tier)) return;
    const int64_t r = Reducible(v, a, tier);
    if (r <= 0) return;
    Option o{v, 0, r, 0};
    if (!WholeJob(v)) {
      const int64_t step = StepGpus(v);
      o.freed = std::min(RoundUp(need, step), r);
      if (SuspendsForOwner(v, a, tier)) {
        // Toward its floor when that covers the owner; else whole: below it, it cannot run.
        const int64_t to_floor = AboveFloor(v);
        o.freed = need <= to_floor ? std::min(RoundUp(need, step), to_floor) : r;
      }
    }
    o.to = grant_[v] - static_cast<int>(o.freed / std::max(1, C(v).gpus_per_replica));
    o.cost = Cost(v, o.to) - Cost(v, grant_[v]);
    const bool covers = o.freed >= need;
    bool better = !found || (covers && !best_covers);
    if (found && covers == best_covers) {
      better = covers ? o.cost < best.cost
                      : o.cost / static_cast<double>(o.freed) <
                            best.cost / static_cast<double>(best.freed);
    }
    if (better) {
      best = o;
      best_covers = covers;
      found = true;
    }
  });
  return found;
}

int64_t AllocatorRun::ReclaimElastic(const Asker& a, Tier tier, int64_t need) {
  int64_t got = 0;
  Option o{};
  // A job shrunk pays a restart whatever it frees: it frees toward the asker's expected need,
  // so the asker's next steps do not shrink it (or another) again. A job is only shrunk while
  // something is short now.
  const int64_t aim = std::max(need, ExpectedShort(a));
  while (got < need && BestElastic(a, tier, aim - got, o)) {
    Take(o.victim, o.to, a);
    got += o.freed;
  }
  return got;
}

int64_t AllocatorRun::ExpectedShort(const Asker& a) const {
  if (a.claim == kNone || C(a.claim).expected <= C(a.claim).want) return 0;
  const int64_t more = Gpus(a.claim, C(a.claim).expected - grant_[a.claim]);
  const int64_t room = a.owned ? OwnedRoom(a.tenant) : BorrowRoom(a.tenant);
  return std::max<int64_t>(0, std::min(more, room) - free_);
}

// Serving and other workloads that are not elastic: the lowest priority first, toward floors
// (below them only when the pool itself shrank past every floor).
int64_t AllocatorRun::ReclaimOthers(const Asker& a, Tier tier, int64_t need) {
  std::vector<size_t> victims;
  ForEachCandidate(a, tier, [&](size_t v) {
    const bool kind_ok = tier == Tier::kBelowFloors || !C(v).elastic;
    if (kind_ok && Eligible(v, a, tier) && Reducible(v, a, tier) > 0) victims.push_back(v);
  });
  // Below floors, a workload the pool may not shrink (an operator's pause or pin, serving not
  // reducible) gives way last: the pool shrinking past every floor overrides a person's hold
  // only where nothing else is left.
  std::stable_sort(victims.begin(), victims.end(), [&](size_t x, size_t y) {
    if (tier == Tier::kBelowFloors && C(x).may_borrow != C(y).may_borrow) return C(x).may_borrow;
    return C(x).priority > C(y).priority;
  });
  int64_t got = 0;
  for (size_t v : victims) {
    if (got >= need) break;
    const int64_t r = Reducible(v, a, tier);  // again: an earlier take may have lowered it
    const int64_t take = std::min(RoundUp(need - got, StepGpus(v)), r);
    if (take <= 0) continue;
    Take(v, grant_[v] - static_cast<int>(take / std::max(1, C(v).gpus_per_replica)), a);
    got += take;
  }
  return got;
}

void AllocatorRun::Take(size_t v, int to, const Asker& a) {
  const int64_t freed = Gpus(v, grant_[v] - to);
  if (freed <= 0) return;
  grant_[v] = to;
  held_[C(v).tenant] -= freed;
  free_ += freed;
  reclaimed_total_ += freed;
  std::string why = a.claim == kNone ? "as the pool shrank to " + std::to_string(pool_) + " GPUs"
                                     : "for " + AskerName(a);
  if (!shrunk_for_[v].empty()) shrunk_for_[v] += "; ";
  shrunk_for_[v] += why;
  if (a.claim == kNone) return;
  reclaimed_for_[a.claim] += freed;
  std::string& from = took_from_[a.claim];
  if (!from.empty()) from += ", ";
  from += std::string(C(v).name);
  from += " (tenant ";
  from += in_.tenants[C(v).tenant].name;
  from += ") ";
  from += std::to_string(freed);
  from += " GPUs";
}

std::string AllocatorRun::AskerName(const Asker& a) const {
  std::string out(C(a.claim).name);
  if (a.owned) {
    out += " (tenant ";
    out += in_.tenants[a.tenant].name;
    out += " reclaiming its guarantee)";
  } else {
    out += " (priority ";
    out += PriorityName(a.priority);
    out += ")";
  }
  return out;
}

std::string AllocatorRun::PriorityName(int rank) const {
  const size_t i = static_cast<size_t>(rank);
  return rank >= 0 && i < in_.priorities.size() ? in_.priorities[i] : std::to_string(rank);
}

}  // namespace aiscale::decide
