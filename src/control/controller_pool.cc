// The Controller's pool step (controller.h SetPool): every workload's plan becomes a claim, the
// allocator grants sizes that fit the pool, and each grant goes into its Decision with why.
#include <algorithm>

#include "control/controller.h"

namespace aiscale::control {
namespace {

// How long the pool's regrowth hold lasts for a workload shrunk for others: the configured
// delay, and at least two of its own restarts (a job is not shrunk and regrown inside one).
double HoldSeconds(const PoolSpec& spec, const PoolMember& m) {
  return std::max(spec.regrow_delay_s, 2 * m.restart_s);
}

constexpr const char* kShrunkAt = "pool.shrunk_at";  // seconds on the tick clock; absent: never
// The size a job had before the pool shrank it, while it has not grown back to it, and when
// it first could have grown back part of the way (seconds on the tick clock).
constexpr const char* kShrunkFrom = "pool.shrunk_from";
constexpr const char* kPartialSince = "pool.partial_since";

// How far back a workload's wants are read for their trend, which a reclaim frees for: two of
// a shrunk job's holds (at least ten minutes). The job cannot come back within the first, and
// if the owner's ramp outlasted it the job would be shrunk again right after it regrew. One
// hold was measured short on a slow ramp (Azure conversation pool, 40 GPUs: 11 rescales,
// 48.1 M samples, against 7 and 61.5 M).
double TrendWindow(const PoolSpec& spec) { return std::max(2 * spec.regrow_delay_s, 600.0); }

void DeclarePoolMetrics(Telemetry& t) {
  t.DeclareGauge("aiscale_pool_gpus",
                 "GPUs in the shared pool the allocator counted (0 while "
                 "the engine cannot tell; see aiscale_pool_known).");
  t.DeclareGauge("aiscale_pool_known", "1 when the pool's size is known this tick, else 0.");
  t.DeclareGauge("aiscale_pool_idle_gpus", "GPUs of the pool granted to no workload.");
  t.DeclareGauge("aiscale_pool_tenant_guaranteed_gpus", "GPUs guaranteed to a tenant.");
  t.DeclareGauge("aiscale_pool_tenant_wanted_gpus", "GPUs a tenant's workloads asked for.");
  t.DeclareGauge("aiscale_pool_tenant_granted_gpus", "GPUs granted to a tenant's workloads.");
  t.DeclareGauge("aiscale_pool_tenant_borrowed_gpus",
                 "GPUs a tenant holds beyond its guarantee (lent by others).");
  t.DeclareCounter("aiscale_pool_reclaimed_gpus_total",
                   "GPUs taken back from a tenant's workloads for others, by tenant.");
  t.DeclareCounter("aiscale_pool_reclaims_total",
                   "Workloads shrunk or suspended by the pool, by tenant and reason.");
}

}  // namespace

Status Controller::SetPool(PoolSpec spec, PoolSource* source, const PoolAllocator* allocator) {
  if (!workloads_.empty()) return Status::Invalid("unable to set the pool: workloads added first");
  if (!source || !allocator)
    return Status::Invalid("unable to set the pool: no source or allocator");
  if (spec.tenants.empty() || spec.priorities.empty()) {
    return Status::Invalid("unable to set the pool: it needs a tenant and a priority class");
  }
  Executor& exec = options_.executor ? *options_.executor : inline_executor_;
  // Stale after 3 collections, like a signal; a drop counts once it lasted shrink_grace.
  pool_watch_ =
      std::make_unique<PoolWatch>(*source, exec, options_.collect_interval,
                                  3 * options_.collect_interval, Seconds(spec.shrink_grace_s));
  pool_spec_ = std::move(spec);
  allocator_ = allocator;
  if (options_.telemetry) DeclarePoolMetrics(*options_.telemetry);
  return Status::Ok();
}

// An elastic workload sizes itself to what the pool can give it: what is idle within its
// tenant's room, or its unused guarantee (which it may take back). Serving keeps the engine's
// figure: its full demand must reach the allocator, which takes GPUs back for it.
std::optional<int> Controller::PoolRoom(Workload& w, int current, std::optional<int> engine,
                                        TimePoint now) const {
  if (!w.binding.pool || !w.binding.pool->elastic || !last_allocation_.pool_known) return engine;
  const PoolMember& m = *w.binding.pool;
  const TenantSpec& t = pool_spec_->tenants[m.tenant];
  const TenantUsage& u = last_allocation_.tenants[m.tenant];
  // Idle GPUs it may grow into: those idle for the lend delay (StableIdle; every idle GPU when
  // the delay is 0), less what is granted.
  int64_t idle = last_allocation_.pool_gpus - last_allocation_.granted_gpus;
  if (last_elastic_idle_) idle = std::min(idle, *last_elastic_idle_);
  // Kept for jobs waiting to regrow; those waiting share what is idle as before (each kept
  // from the others would leave it idle for all).
  if (w.owed_gpus == 0) idle = std::max<int64_t>(0, idle - owed_gpus_);
  int64_t borrow_room = t.borrow_limit ? t.guaranteed + *t.borrow_limit - u.granted : idle;
  const int64_t room = std::max(std::min(idle, borrow_room), t.guaranteed - u.granted);
  const int64_t replicas = std::max<int64_t>(0, room) / std::max(1, m.gpus_per_replica);
  if (HoldsForWholeRegrowth(w, current, replicas, now)) {
    return engine ? std::min(*engine, current) : current;
  }
  const int cap = static_cast<int>(std::min<int64_t>(current + replicas, kMaxReplicaCount));
  return engine ? std::min(*engine, cap) : cap;
}

// A job shrunk for a peak grows back in one step, once what it lost is free: a service that
// steps down after its peak would otherwise regrow it one restart per step (Azure conversation
// pool, 25 GPUs: 1 -> 2 -> 5 over 315 s; one step loses about what one restart costs). If less
// comes free for a whole hold (the service settled higher), it grows on what there is.
bool Controller::HoldsForWholeRegrowth(Workload& w, int current, int64_t free_replicas,
                                       TimePoint now) const {
  const int owed = static_cast<int>(w.pool_state.Get(kShrunkFrom, 0)) - current;
  if (owed <= 0 || free_replicas <= 0 || free_replicas >= owed) {
    w.pool_state.values.erase(kPartialSince);
    return false;
  }
  const double now_s = SinceEpochSeconds(now);
  const double since = w.pool_state.Get(kPartialSince, now_s);
  w.pool_state.Set(kPartialSince, since);
  return now_s - since < HoldSeconds(*pool_spec_, *w.binding.pool);
}

int64_t Controller::OwedGpus(const Workload& w, int size, TimePoint now) const {
  const PoolMember& m = *w.binding.pool;
  const int owed = static_cast<int>(w.pool_state.Get(kShrunkFrom, 0)) - size;
  if (owed <= 0 || w.completed || pool_spec_->reclaim == ReclaimMode::kWholeJob) return 0;
  // Kept for one hold past its regrowth hold at most, and for one hold once part came free:
  // what frees up may never make a whole replica of it, and it may never want it back.
  const double now_s = SinceEpochSeconds(now), hold = HoldSeconds(*pool_spec_, m);
  if (now_s - w.pool_state.Get(kShrunkAt, now_s) >= 2 * hold) return 0;
  const double since = w.pool_state.Get(kPartialSince, -1);
  if (since >= 0 && now_s - since >= hold) return 0;
  return static_cast<int64_t>(owed) * m.gpus_per_replica;
}

std::optional<PolicyInput::Lease> Controller::LeaseOf(const Workload& w, int current) const {
  if (!w.binding.pool || !w.binding.pool->elastic || !last_allocation_.pool_known ||
      !loan_estimate_) {
    return std::nullopt;
  }
  const PoolMember& m = *w.binding.pool;
  const int64_t own =
      pool_spec_->tenants[m.tenant].guaranteed - last_allocation_.tenants[m.tenant].granted;
  const int64_t more = std::max<int64_t>(0, own) / std::max(1, m.gpus_per_replica);
  return PolicyInput::Lease{static_cast<int>(std::min<int64_t>(current + more, kMaxReplicaCount)),
                            *loan_estimate_};
}

// A loan opens when the workload grows while its tenant holds GPUs beyond its guarantee, and
// closes when the pool takes them back or the tenant no longer borrows: what a lender's GPUs
// were worth to a borrower, measured.
void Controller::TrackLoan(const Workload& w, const PoolClaim& c, const Grant& g, double now_s) {
  const bool borrows = last_allocation_.tenants[c.tenant].borrowed > 0;
  const bool taken = g.reason == GrantReason::kShrunk || g.reason == GrantReason::kSuspended;
  if (loans_.IsOpen(w.key)) {
    if (taken || !borrows) loans_.Close(w.key, now_s);
  } else if (borrows && g.replicas > c.current) {
    loans_.Open(w.key, now_s);
  }
}

PoolClaim Controller::ClaimOf(const Workload& w, const Decision& d, bool acts,
                              TimePoint now) const {
  const PoolMember& m = *w.binding.pool;
  PoolClaim c;
  c.name = d.workload;
  c.tenant = m.tenant;
  c.priority = m.priority;
  c.gpus_per_replica = m.gpus_per_replica;
  c.granularity = m.granularity;
  // Observe failed: the size it last had still holds its GPUs; nothing is known to change.
  // (Before any Observe succeeded that size is unknown: AllocatePool then holds everyone.)
  c.current = acts || d.action != Action::kFailed ? d.current : w.last_current.value_or(0);
  c.want = acts ? d.constrained : c.current;
  if (w.completed) {
    // A finished job's processes have exited (the engine said so): its GPUs are free for
    // others, and it asks for none.
    c.current = c.want = 0;
  }
  // An operator's pause or pin (through the API or an annotation) is not undone by the pool:
  // the workload holds its size.
  const bool movable = acts && !w.steered && !w.binding.held && (m.elastic || m.reducible);
  c.floor = movable ? std::min(m.floor, c.current) : c.current;
  c.elastic = movable && m.elastic;
  c.may_borrow = movable;
  const double shrunk_at = w.pool_state.Get(kShrunkAt, -1e300);
  c.regrow_held = SinceEpochSeconds(now) < shrunk_at + HoldSeconds(*pool_spec_, m);
  return c;
}

void Controller::AllocatePool(std::vector<Decision>& ds, const std::vector<char>& acts,
                              TimePoint now) {
  AllocatorInput in;
  const PoolReading reading = pool_watch_->Read(now);
  in.tenants = pool_spec_->tenants;
  in.priorities = pool_spec_->priorities;
  in.mode = pool_spec_->reclaim;
  in.pool_detail = reading.note;
  if (reading.capacity) {
    in.pool_gpus = reading.capacity->gpus;
    in.pool_detail = reading.capacity->detail + (reading.note.empty() ? "" : "; " + reading.note);
    for (const TenantSpec& t : in.tenants) {
      auto it = reading.capacity->tenant_ceilings.find(t.name);
      in.tenant_ceilings.push_back(it == reading.capacity->tenant_ceilings.end()
                                       ? std::nullopt
                                       : std::optional<int64_t>(it->second));
    }
  }
  if (in.pool_gpus) LeaveOutDeparted(in);
  std::vector<size_t> index;  // claim -> workload
  for (size_t i = 0; i < workloads_.size(); ++i) {
    if (!workloads_[i]->binding.pool) continue;
    in.claims.push_back(ClaimOf(*workloads_[i], ds[i], acts[i], now));
    in.claims.back().expected = Expected(*workloads_[i], in.claims.back(), now);
    index.push_back(i);
    // A member whose size was never observed holds an unknown number of GPUs: what is idle is
    // unknown too, and lending it could grant the same GPUs twice. Missing data: hold everyone.
    if (!acts[i] && ds[i].action == Action::kFailed && !workloads_[i]->last_current) {
      in.pool_gpus.reset();
      in.pool_detail = "the size of " + ds[i].workload +
                       " is not known (its engine has not answered an Observe yet)";
    }
  }
  int64_t held = 0;
  for (const PoolClaim& c : in.claims) held += static_cast<int64_t>(c.current) * c.gpus_per_replica;
  if (in.pool_gpus && !reading.settled && *in.pool_gpus < held) {
    // No earlier reading can say whether this low one lasts (a start, an outage): hold.
    in.pool_detail = "the engine reports " + std::to_string(*in.pool_gpus) +
                     " GPUs, fewer than the workloads hold (" + std::to_string(held) +
                     "), read for " + std::to_string(static_cast<int64_t>(reading.watched_s)) +
                     " s of the shrink grace: holding";
    in.pool_gpus.reset();
  }
  in.elastic_idle = LendableIdle(StableIdle(SinceEpochSeconds(now)), in.claims);
  last_elastic_idle_ = in.elastic_idle;
  in.shrink_cost = [&](size_t k, int to) {
    const Workload& w = *workloads_[index[k]];
    const PoolMember& m = *w.binding.pool;
    const std::optional<double> cost = w.binding.policy->ShrinkCost(
        w.policy_state, in.claims[k].current, to, HoldSeconds(*pool_spec_, m), m.gpus_per_replica);
    return cost ? *cost
                : static_cast<double>(in.claims[k].current - to) * m.gpus_per_replica *
                      HoldSeconds(*pool_spec_, m);
  };
  last_allocation_ = allocator_->Allocate(in);
  last_pool_note_ = in.pool_detail;
  // Only a lend delay reads (and prunes) the history; without one it would only grow.
  if (last_allocation_.pool_known && pool_spec_->lend_delay_s > 0) {
    idle_history_.emplace_back(SinceEpochSeconds(now),
                               last_allocation_.pool_gpus - last_allocation_.granted_gpus);
  }
  owed_gpus_ = 0;
  for (size_t k = 0; k < index.size(); ++k) {
    Workload& w = *workloads_[index[k]];
    RecordPool(w, ds[index[k]], in.claims[k], last_allocation_.grants[k], now);
    w.owed_gpus =
        last_allocation_.pool_known ? OwedGpus(w, last_allocation_.grants[k].replicas, now) : 0;
    owed_gpus_ += w.owed_gpus;
    if (w.binding.pool->elastic && last_allocation_.pool_known) {
      TrackLoan(w, in.claims[k], last_allocation_.grants[k], SinceEpochSeconds(now));
    }
  }
  loan_estimate_ = loans_.Expected(SinceEpochSeconds(now));
  if (options_.telemetry) CountPool(last_allocation_);
  if (options_.board) options_.board->PublishPool(PoolViewOf(last_allocation_));
}

void Controller::LeaveOutDeparted(AllocatorInput& in) const {
  int64_t gpus = 0;
  std::string who;
  for (const auto& [key, n] : departed_gpus_) {
    if (n <= 0) continue;
    gpus += n;
    who += (who.empty() ? "" : ", ") + key + " " + std::to_string(n);
  }
  if (gpus == 0) return;
  in.pool_gpus = std::max<int64_t>(0, *in.pool_gpus - gpus);
  in.pool_detail += "; " + std::to_string(gpus) + " GPUs held by workloads no longer managed (" +
                    who + ") are left out until they are managed again";
}

PoolView Controller::PoolViewOf(const Allocation& a) const {
  PoolView v;
  v.known = a.pool_known;
  v.gpus = a.pool_gpus;
  v.granted = a.granted_gpus;
  v.reclaimed = a.reclaimed_gpus;
  v.detail = last_pool_note_;
  for (size_t i = 0; i < pool_spec_->tenants.size(); ++i) {
    const TenantSpec& t = pool_spec_->tenants[i];
    const TenantUsage u = i < a.tenants.size() ? a.tenants[i] : TenantUsage{};
    v.tenants.push_back(
        {t.name, t.guaranteed, t.borrow_limit, t.weight, u.wanted, u.granted, u.borrowed});
  }
  return v;
}

void Controller::RecordPool(Workload& w, Decision& d, const PoolClaim& c, const Grant& g,
                            TimePoint now) {
  const PoolMember& m = *w.binding.pool;
  d.pool.active = true;
  d.pool.tenant = pool_spec_->tenants[m.tenant].name;
  d.pool.wanted = c.want;
  d.pool.granted = g.replicas;
  d.pool.reason = std::string(GrantReasonName(g.reason));
  d.pool.detail = g.detail;
  if (g.reason == GrantReason::kRegrowHeld) {
    const double until = w.pool_state.Get(kShrunkAt, 0) + HoldSeconds(*pool_spec_, m);
    d.pool.detail += " (held until t=" + std::to_string(static_cast<int64_t>(until)) + " s)";
  }
  if (g.reason == GrantReason::kShrunk || g.reason == GrantReason::kSuspended) {
    w.pool_state.Set(kShrunkAt, SinceEpochSeconds(now));
    // Whole-job mode resumes a job whole anyway (as Kueue does).
    if (g.reason == GrantReason::kShrunk && m.regrows_whole) {
      w.pool_state.Set(kShrunkFrom, std::max<double>(c.current, w.pool_state.Get(kShrunkFrom, 0)));
    }
    if (options_.telemetry) {
      const std::string& tenant = d.pool.tenant;
      options_.telemetry->Add("aiscale_pool_reclaims_total",
                              {{"tenant", tenant}, {"reason", d.pool.reason}});
      options_.telemetry->Add("aiscale_pool_reclaimed_gpus_total", {{"tenant", tenant}},
                              static_cast<double>(c.current - g.replicas) * m.gpus_per_replica);
    }
  }
  if (g.replicas >= w.pool_state.Get(kShrunkFrom, 0)) {
    w.pool_state.values.erase(kShrunkFrom);
    w.pool_state.values.erase(kPartialSince);
  }
  d.constrained = g.replicas;
  w.pool_limit = g.replicas < c.want ? std::optional<int>(g.replicas) : std::nullopt;
}

// The want `c` expects within the trend window: its growth over the last window, once more
// (a ramp continues; a flat or falling want expects itself), within its bounds.
int Controller::Expected(Workload& w, const PoolClaim& c, TimePoint now) const {
  const double t = SinceEpochSeconds(now);
  w.wants.emplace_back(t, c.want);
  while (w.wants.size() > 1 && w.wants[1].first <= t - TrendWindow(*pool_spec_)) {
    w.wants.pop_front();
  }
  const int rise = std::max(0, c.want - w.wants.front().second);
  return std::min(w.binding.max_replicas, c.want + rise);
}

// The fewest idle GPUs over the last lend delay: what has been idle all that time. Nothing
// before the history covers a whole delay; with no delay, every idle GPU (nullopt).
std::optional<int64_t> Controller::StableIdle(double now_s) {
  if (pool_spec_->lend_delay_s <= 0) return std::nullopt;
  const double since = now_s - pool_spec_->lend_delay_s;
  while (idle_history_.size() > 1 && idle_history_[1].first <= since) idle_history_.pop_front();
  if (idle_history_.empty() || idle_history_.front().first > since) return 0;
  int64_t least = idle_history_.front().second;
  for (const auto& [t, idle] : idle_history_) least = std::min(least, idle);
  return least;
}

// What a borrowing elastic job may grow into: the stable idle GPUs less what the workloads
// that are not elastic (serving) are rising toward (PoolClaim::expected). A job grown onto
// GPUs a ramping service will take back within minutes pays two restarts for nothing. Whole-job
// mode admits as Kueue does, on what is idle (after the lend delay), with no such foresight.
std::optional<int64_t> Controller::LendableIdle(std::optional<int64_t> stable,
                                                const std::vector<PoolClaim>& claims) const {
  if (!stable || pool_spec_->reclaim == ReclaimMode::kWholeJob) return stable;
  int64_t foreseen = 0;
  for (const PoolClaim& c : claims) {
    if (c.elastic) continue;
    const int64_t rise = std::max(0, c.expected - std::max(c.want, c.current));
    foreseen += rise * c.gpus_per_replica;
  }
  return std::max<int64_t>(0, *stable - foreseen);
}

void Controller::CountPool(const Allocation& a) const {
  Telemetry& t = *options_.telemetry;
  t.Set("aiscale_pool_known", {}, a.pool_known ? 1 : 0);
  t.Set("aiscale_pool_gpus", {}, static_cast<double>(a.pool_gpus));
  t.Set("aiscale_pool_idle_gpus", {}, static_cast<double>(a.pool_gpus - a.granted_gpus));
  for (size_t i = 0; i < a.tenants.size() && i < pool_spec_->tenants.size(); ++i) {
    const MetricLabels l = {{"tenant", pool_spec_->tenants[i].name}};
    t.Set("aiscale_pool_tenant_guaranteed_gpus", l,
          static_cast<double>(pool_spec_->tenants[i].guaranteed));
    t.Set("aiscale_pool_tenant_wanted_gpus", l, static_cast<double>(a.tenants[i].wanted));
    t.Set("aiscale_pool_tenant_granted_gpus", l, static_cast<double>(a.tenants[i].granted));
    t.Set("aiscale_pool_tenant_borrowed_gpus", l, static_cast<double>(a.tenants[i].borrowed));
  }
}

}  // namespace aiscale::control
