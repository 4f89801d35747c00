#include "decide/allocator.h"

#include <algorithm>

#include "decide/allocator_run.h"

namespace aiscale::decide {

namespace {

// Rule 0: without the pool's size nobody grows and nobody is shrunk for the pool.
Allocation Hold(const AllocatorInput& in) {
  Allocation out;
  out.tenants.resize(in.tenants.size());
  for (const PoolClaim& c : in.claims) {
    Grant g;
    g.replicas = c.want >= 0 ? std::min(c.want, c.current) : c.current;
    if (c.want > c.current) {
      g.reason = GrantReason::kPoolUnknown;
      g.detail = "pool size unknown (" + in.pool_detail + "): holding at " +
                 std::to_string(c.current) + " instead of growing to " + std::to_string(c.want);
    }
    out.grants.push_back(std::move(g));
  }
  return out;
}

// The controller builds claims from validated config; a claim that still names no tenant or a
// negative size is a bug upstream, and the safe answer to it is to hold everyone.
std::string CheckInput(const AllocatorInput& in) {
  for (const PoolClaim& c : in.claims) {
    if (c.tenant < 0 || static_cast<size_t>(c.tenant) >= in.tenants.size() || c.priority < 0 ||
        c.current < 0 || c.want < 0 || c.floor < 0 || c.gpus_per_replica < 1 || c.granularity < 1) {
      return "invalid claim for " + std::string(c.name);
    }
  }
  return "";
}

}  // namespace

Allocation Allocator::Allocate(const AllocatorInput& in) const { return decide::Allocate(in); }

Allocation Allocate(const AllocatorInput& in) {
  if (!in.pool_gpus || *in.pool_gpus < 0) return Hold(in);
  if (const std::string bad = CheckInput(in); !bad.empty()) {
    AllocatorInput held = in;
    held.pool_gpus.reset();
    held.pool_detail = bad;
    return Hold(held);
  }
  AllocatorRun run(in);
  run.TakeVoluntaryShrinks();
  run.FitToPool();
  run.GrowWithinGuarantees();
  run.GrowByBorrowing();
  return run.Finish();
}

}  // namespace aiscale::decide
