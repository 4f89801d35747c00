#include "decide/allocator_run.h"

#include <algorithm>
#include <limits>

namespace aiscale::decide {
AllocatorRun::AllocatorRun(const AllocatorInput& in)
    : in_(in),
      pool_(std::max<int64_t>(0, in.pool_gpus.value_or(0))),
      elastic_idle_left_(in.elastic_idle.value_or(std::numeric_limits<int64_t>::max())) {
  const size_t n = in.claims.size();
  grant_.assign(n, 0);
  held_.assign(in.tenants.size(), 0);
  by_tenant_.resize(in.tenants.size());
  reclaimed_for_.assign(n, 0);
  borrowed_.assign(n, 0);
  took_from_.resize(n);
  shrunk_for_.resize(n);
  capped_.assign(n, false);
  cost_cache_.assign(n, {-1, 0.0});
  for (size_t i = 0; i < n; ++i) by_tenant_[C(i).tenant].push_back(i);
}

int64_t AllocatorRun::StepGpus(size_t i) const {
  return static_cast<int64_t>(std::max(1, C(i).granularity)) * std::max(1, C(i).gpus_per_replica);
}

int64_t AllocatorRun::Gpus(size_t i, int replicas) const {
  return static_cast<int64_t>(replicas) * std::max(1, C(i).gpus_per_replica);
}

int64_t AllocatorRun::OwnedRoom(int t) const {
  return std::min(in_.tenants[t].guaranteed, Ceiling(t)) - held_[t];
}

int64_t AllocatorRun::BorrowRoom(int t) const {
  const TenantSpec& ts = in_.tenants[t];
  // Without a borrow limit a tenant may hold the whole pool (what is free or can be taken).
  const int64_t cap = ts.borrow_limit ? ts.guaranteed + *ts.borrow_limit : pool_;
  return std::min(cap, Ceiling(t)) - held_[t];
}

int64_t AllocatorRun::Ceiling(int t) const {
  const size_t i = static_cast<size_t>(t);
  return i < in_.tenant_ceilings.size() && in_.tenant_ceilings[i] ? *in_.tenant_ceilings[i] : pool_;
}

bool AllocatorRun::WholeJob(size_t i) const {
  return in_.mode == ReclaimMode::kWholeJob && C(i).elastic;
}

void AllocatorRun::TakeVoluntaryShrinks() {
  int64_t held = 0;
  for (size_t i = 0; i < grant_.size(); ++i) {
    grant_[i] = std::max(0, std::min(C(i).current, C(i).want));
    held_[C(i).tenant] += Gpus(i, grant_[i]);
    held += Gpus(i, grant_[i]);
  }
  free_ = pool_ - held;
}

void AllocatorRun::FitToPool() {
  if (free_ >= 0) return;
  Reclaim(Asker{kNone, -1, -1, true}, -free_, true);
}

void AllocatorRun::GrowWithinGuarantees() {
  std::vector<size_t> order;
  for (size_t i = 0; i < grant_.size(); ++i) {
    // A whole job is admitted whole, guarantee and borrowing together, in GrowByBorrowing.
    if (Wants(i) && !WholeJob(i)) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return C(a).priority < C(b).priority; });
  for (size_t r : order) Obtain(r, Gpus(r, C(r).want - grant_[r]), true);
}

void AllocatorRun::GrowByBorrowing() {
  int classes = 0;
  for (const PoolClaim& c : in_.claims) classes = std::max(classes, c.priority + 1);
  std::vector<std::vector<size_t>> by_class(static_cast<size_t>(classes));
  for (size_t i = 0; i < grant_.size(); ++i) {
    if (Wants(i) && C(i).may_borrow) by_class[C(i).priority].push_back(i);
  }
  for (const std::vector<size_t>& requests : by_class) {
    if (requests.empty()) continue;
    ShareIdle(requests);
    for (size_t r : requests) {  // what idle GPUs did not cover: from lower priorities
      const int64_t need = Gpus(r, C(r).want - grant_[r]);
      if (need > 0) Obtain(r, need, false);
    }
  }
}

bool AllocatorRun::Limited(int t) const {
  return in_.tenants[t].borrow_limit.has_value() || Ceiling(t) < pool_;
}

bool AllocatorRun::Wants(size_t i) const {
  return C(i).want > grant_[i] && !C(i).regrow_held && shrunk_for_[i].empty();
}

// Weighted max-min of the idle GPUs across the tenants asking, each capped by its borrow room.
void AllocatorRun::ShareIdle(const std::vector<size_t>& requests) {
  std::vector<std::vector<size_t>> asks(in_.tenants.size());
  std::vector<int64_t> demand(in_.tenants.size(), 0);
  for (size_t r : requests) {
    if (WholeJob(r)) continue;  // all or nothing: admitted in GrowByBorrowing's own pass
    asks[C(r).tenant].push_back(r);
    demand[C(r).tenant] += Gpus(r, C(r).want - grant_[r]);
  }
  std::vector<int> tenants;
  double weight = 0;
  for (size_t t = 0; t < asks.size(); ++t) {
    const int64_t room = std::max<int64_t>(0, BorrowRoom(static_cast<int>(t)));
    if (demand[t] > room && Limited(static_cast<int>(t))) {
      for (size_t r : asks[t]) capped_[r] = true;
    }
    demand[t] = std::min(demand[t], room);
    if (demand[t] > 0) {
      tenants.push_back(static_cast<int>(t));
      weight += in_.tenants[t].weight;
    }
  }
  std::sort(tenants.begin(), tenants.end(), [&](int a, int b) {
    return demand[a] / in_.tenants[a].weight < demand[b] / in_.tenants[b].weight;
  });
  for (int t : tenants) {
    if (free_ <= 0) break;
    const double w = in_.tenants[t].weight;
    const int64_t fair = static_cast<int64_t>(static_cast<double>(free_) * w / weight);
    weight -= w;
    ShareWithinTenant(asks[t], std::min(demand[t], std::max<int64_t>(fair, 0)));
  }
}

// Max-min across one tenant's requests, in each request's group multiples.
void AllocatorRun::ShareWithinTenant(std::vector<size_t> requests, int64_t gpus) {
  std::stable_sort(requests.begin(), requests.end(), [&](size_t a, size_t b) {
    return Gpus(a, C(a).want - grant_[a]) < Gpus(b, C(b).want - grant_[b]);
  });
  int64_t left = std::min(gpus, free_);
  for (size_t k = 0; k < requests.size() && left > 0; ++k) {
    const size_t r = requests[k];
    const int64_t fair = left / static_cast<int64_t>(requests.size() - k);
    const int64_t give = RoundDown(
        std::min(Gpus(r, C(r).want - grant_[r]), std::max(fair, StepGpus(r))), StepGpus(r));
    int64_t given = std::min(give, RoundDown(left, StepGpus(r)));
    if (C(r).elastic) given = std::min(given, RoundDown(elastic_idle_left_, StepGpus(r)));
    if (given > 0) Give(r, given);
    left -= given;
  }
}

void AllocatorRun::Give(size_t i, int64_t gpus) {
  const int t = C(i).tenant;
  const int64_t borrowed = std::max<int64_t>(0, gpus - std::max<int64_t>(0, OwnedRoom(t)));
  borrowed_[i] += borrowed;
  if (C(i).elastic) elastic_idle_left_ = std::max<int64_t>(0, elastic_idle_left_ - borrowed);
  grant_[i] += static_cast<int>(gpus / std::max(1, C(i).gpus_per_replica));
  held_[t] += gpus;
  free_ -= gpus;
}

// Sources, cheapest first: idle GPUs, then other tenants' borrowed ones, then the asker's own
// tenant's lower priorities. The first two add to the tenant's holdings and are capped by its
// room (its guarantee when `owned`, else guarantee + borrow limit, and the engine's quota);
// the last moves GPUs within the tenant and is not.
int64_t AllocatorRun::Obtain(size_t r, int64_t gpus, bool owned) {
  const int t = C(r).tenant;
  const int64_t step = StepGpus(r);
  auto room = [&] { return std::max<int64_t>(0, owned ? OwnedRoom(t) : BorrowRoom(t)); };
  // Borrowing elastic growth takes only GPUs idle long enough (AllocatorInput::elastic_idle).
  if (!owned && C(r).elastic) gpus = std::min(gpus, elastic_idle_left_);
  gpus = RoundDown(gpus, step);
  if (gpus <= 0) return 0;
  if (WholeJob(r)) {  // gang admission on idle GPUs only
    if (free_ < gpus || room() < gpus) return 0;
    Give(r, gpus);
    return gpus;
  }
  const Asker a{r, t, C(r).priority, owned};
  const int64_t room0 = room();
  const int64_t outside =
      std::min(room0, free_ + Available(a, Tier::kBorrowed, std::max<int64_t>(0, room0 - free_)));
  // Idle GPUs past its guarantee that the tenant may still borrow (the lending phase gives
  // them): no one of its own is shrunk while they are there.
  int64_t borrowable = 0;
  if (owned) {
    borrowable = std::max<int64_t>(
        0, std::min(free_, std::max<int64_t>(0, BorrowRoom(t))) - std::min(free_, room0));
    if (C(r).elastic) borrowable = std::min(borrowable, elastic_idle_left_);
  }
  // Never shrink anyone for less than one step of the asker: the GPUs would sit idle. (`gpus`
  // is a multiple of the step, so counting past gpus - outside changes nothing.)
  const int64_t own_part = std::max<int64_t>(0, gpus - outside - borrowable);
  const int64_t target =
      std::min(gpus, RoundDown(outside + Available(a, Tier::kOwnTenant, own_part), step));
  if (target <= 0) {
    if (!owned && Limited(t) && room0 < step) capped_[r] = true;
    return 0;
  }
  int64_t short_by = target - std::min(free_, room0);
  int64_t moved = 0;  // taken from the tenant's own lower priorities: its holdings do not change
  if (short_by > 0) {
    const int64_t from_others = std::min(short_by, std::max<int64_t>(0, room0 - free_));
    if (from_others > 0) short_by -= ReclaimTier(a, Tier::kBorrowed, from_others);
    if (short_by > 0) moved = ReclaimTier(a, Tier::kOwnTenant, short_by);
  }
  const int64_t give = std::min(target, RoundDown(std::min(free_, room0 + moved), step));
  if (give > 0) Give(r, give);
  if (!owned && Limited(t) && give < gpus && room() < gpus - give) capped_[r] = true;
  return give;
}

}  // namespace aiscale::decide
