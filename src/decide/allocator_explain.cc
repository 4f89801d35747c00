// AllocatorRun::Finish: the grants with what the pool did for or to each workload, in words.
#include <string>

#include "core/pool.h"
#include "decide/allocator_run.h"

namespace aiscale::decide {

Allocation AllocatorRun::Finish() {
  Allocation out;
  out.pool_known = true;
  out.pool_gpus = pool_;
  out.reclaimed_gpus = reclaimed_total_;
  out.tenants.resize(in_.tenants.size());
  for (size_t i = 0; i < grant_.size(); ++i) {
    const PoolClaim& c = C(i);
    Grant g;
    g.replicas = grant_[i];
    g.reclaimed_gpus = reclaimed_for_[i];
    if (!shrunk_for_[i].empty()) {
      const bool suspended = WholeJob(i) && grant_[i] == 0;
      g.reason = suspended ? GrantReason::kSuspended : GrantReason::kShrunk;
      g.detail = (suspended ? "suspended " : "shrunk ") +
                 std::to_string(std::min(c.current, c.want)) + " -> " + std::to_string(grant_[i]) +
                 " " + shrunk_for_[i];
    } else if (grant_[i] > std::min(c.current, c.want)) {
      ExplainGrowth(i, g);
    }
    if (grant_[i] < c.want && shrunk_for_[i].empty()) ExplainShortfall(i, g);
    TenantUsage& u = out.tenants[c.tenant];
    u.wanted += Gpus(i, c.want);
    out.grants.push_back(std::move(g));
  }
  for (size_t t = 0; t < held_.size(); ++t) {
    out.tenants[t].granted = held_[t];
    out.tenants[t].borrowed = std::max<int64_t>(0, Excess(static_cast<int>(t)));
    out.granted_gpus += held_[t];
  }
  return out;
}

void AllocatorRun::ExplainGrowth(size_t i, Grant& g) const {
  const TenantSpec& t = in_.tenants[C(i).tenant];
  if (reclaimed_for_[i] > 0) {
    g.reason = GrantReason::kReclaimed;
    g.detail = "took back " + GpuCount(reclaimed_for_[i]) + ": " + took_from_[i];
  } else if (borrowed_[i] > 0) {
    g.reason = GrantReason::kBorrowed;
    g.detail = "borrowed " + GpuCount(borrowed_[i]) + " beyond tenant " + t.name +
               "'s guarantee of " + GpuCount(t.guaranteed) +
               " (idle GPUs, lent by priority and weight)";
  } else {
    g.reason = GrantReason::kGuarantee;
    g.detail = "within tenant " + t.name + "'s guarantee of " + GpuCount(t.guaranteed);
  }
}

void AllocatorRun::ExplainShortfall(size_t i, Grant& g) const {
  const PoolClaim& c = C(i);
  const TenantSpec& t = in_.tenants[c.tenant];
  const std::string wanted =
      "wanted " + std::to_string(c.want) + ", granted " + std::to_string(grant_[i]) + ": ";
  std::string why;
  GrantReason reason;
  if (c.regrow_held) {
    reason = GrantReason::kRegrowHeld;
    why = "shrunk by the pool too recently to grow back";
  } else if (capped_[i]) {
    reason = GrantReason::kBorrowLimit;
    why = "tenant " + t.name + " holds " + GpuCount(held_[c.tenant]) + ", its limit (guarantee " +
          GpuCount(t.guaranteed) +
          (t.borrow_limit ? " + borrow limit " + GpuCount(*t.borrow_limit) : std::string()) +
          (Ceiling(c.tenant) < pool_ ? ", engine quota " + GpuCount(Ceiling(c.tenant)) : "") + ")";
  } else if (c.elastic && free_ > 0) {
    // Idle GPUs it did not get: fewer than one of its steps, or not idle for the lend delay.
    reason = GrantReason::kPoolFull;
    why = "pool full for it (" + GpuCount(pool_) + ", " + GpuCount(free_) + " idle, " +
          (free_ < StepGpus(i) ? "less than one step of " + GpuCount(StepGpus(i))
                               : std::string("lent to elastic growth only once idle for the "
                                             "pool's lend delay")) +
          ")";
  } else {
    reason = GrantReason::kPoolFull;
    why = "pool full (" + GpuCount(pool_) + ", " + GpuCount(free_) +
          " idle, nothing this workload may take back)";
  }
  if (g.reason == GrantReason::kAsWanted) {
    g.reason = reason;
    g.detail = wanted + why;
  } else {
    g.detail += "; " + wanted + why;
  }
}

}  // namespace aiscale::decide
