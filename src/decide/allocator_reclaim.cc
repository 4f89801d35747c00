// AllocatorRun's reclaims: which workloads give GPUs back for whom, cheapest source first.
#include <algorithm>

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
    r = RoundDown(Gpus(v, grant_[v] - std::min(c.floor, grant_[v])), step);
  }
  if (tier == Tier::kBorrowed) {
    const int64_t limit =
        a.owned ? RoundUp(Excess(c.tenant), step) : RoundDown(Excess(c.tenant), step);
    if (WholeJob(v)) return (a.owned && limit > 0) || limit >= r ? r : 0;
    r = std::min(r, limit);
  }
  return std::max<int64_t>(0, r);
}

double AllocatorRun::Cost(size_t v, int to) const {
  if (to >= C(v).current) return 0;
  if (!in_.shrink_cost) return static_cast<double>(Gpus(v, C(v).current - to));
  std::pair<int, double>& cached = cost_cache_[v];
  if (cached.first != to) cached = {to, std::max(0.0, in_.shrink_cost(v, to))};
  return cached.second;
}

std::vector<size_t> AllocatorRun::Candidates(const Asker& a, Tier tier) const {
  if (tier == Tier::kOwnTenant) return by_tenant_[a.tenant];
  std::vector<size_t> out;
  for (size_t t = 0; t < by_tenant_.size(); ++t) {
    const bool lends = static_cast<int>(t) != a.tenant && Excess(static_cast<int>(t)) > 0;
    if (tier != Tier::kBorrowed || lends) {
      out.insert(out.end(), by_tenant_[t].begin(), by_tenant_[t].end());
    }
  }
  return out;
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

int64_t AllocatorRun::Available(const Asker& a, Tier tier) const {
  std::vector<int64_t> per_tenant(in_.tenants.size(), 0);
  for (size_t v : Candidates(a, tier)) {
    if (Eligible(v, a, tier)) per_tenant[C(v).tenant] += Reducible(v, a, tier);
  }
  int64_t total = 0;
  for (size_t t = 0; t < per_tenant.size(); ++t) {
    int64_t r = per_tenant[t];
    // A lending tenant gives no more than it borrowed, however many of its workloads could.
    if (tier == Tier::kBorrowed) r = std::min(r, RoundUp(Excess(static_cast<int>(t)), 1));
    total += r;
  }
  return total;
}

bool AllocatorRun::BestElastic(const Asker& a, Tier tier, int64_t need, Option& best) const {
  bool found = false, best_covers = false;
  for (size_t v : Candidates(a, tier)) {
    if (!C(v).elastic || !Eligible(v, a, tier)) continue;
    const int64_t r = Reducible(v, a, tier);
    if (r <= 0) continue;
    Option o{v, 0, r, 0};
    if (!WholeJob(v)) o.freed = std::min(RoundUp(need, StepGpus(v)), r);
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
  }
  return found;
}

int64_t AllocatorRun::ReclaimElastic(const Asker& a, Tier tier, int64_t need) {
  int64_t got = 0;
  Option o{};
  while (got < need && BestElastic(a, tier, need - got, o)) {
    Take(o.victim, o.to, a);
    got += o.freed;
  }
  return got;
}

// Serving and other workloads that are not elastic: the lowest priority first, toward floors
// (below them only when the pool itself shrank past every floor).
int64_t AllocatorRun::ReclaimOthers(const Asker& a, Tier tier, int64_t need) {
  std::vector<size_t> victims;
  for (size_t v : Candidates(a, tier)) {
    const bool kind_ok = tier == Tier::kBelowFloors || !C(v).elastic;
    if (kind_ok && Eligible(v, a, tier) && Reducible(v, a, tier) > 0) victims.push_back(v);
  }
  std::stable_sort(victims.begin(), victims.end(),
                   [&](size_t x, size_t y) { return C(x).priority > C(y).priority; });
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
  std::string why = a.claim == kNone ? "the pool shrank to " + std::to_string(pool_) + " GPUs"
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
