// The allocator seam of the shared GPU pool: what each workload asks of the pool this tick
// (PoolClaim), what it is granted and why (Grant), and the PoolAllocator interface the
// Controller calls. The rules live with the implementation (decide/allocator.h); this header
// has no dependencies beyond core, so the Controller runs the allocator without linking decide/.
//
// Contract: Allocate is pure and deterministic (no clock, no I/O, no state of its own) and
// thread-safe; the grants never add up to more than the pool, never exceed a claim's want.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pool.h"

namespace aiscale {

struct PoolClaim {
  std::string_view name;  // for the reasons; must outlive the call
  int tenant = 0;         // index into AllocatorInput::tenants
  int priority = 0;       // rank, 0 the highest
  int gpus_per_replica = 1;
  int granularity = 1;
  int current = 0;  // replicas held now
  int want = 0;     // what the workload's own pipeline asks for this tick
  int floor = 0;    // the pool shrinks it no lower (min_replicas or its shrink floor)
  // Elastic training: shrunk in group multiples for others where lost progress is smallest.
  // Otherwise (serving) it is reduced toward its floor only for higher priorities or an owner.
  bool elastic = false;
  bool may_borrow = true;    // false for a workload the pool may not shrink
  bool regrow_held = false;  // shrunk by the pool recently: no growth this tick
};

enum class GrantReason {
  kAsWanted,     // what it wanted, nothing taken from anyone
  kGuarantee,    // grew within its tenant's guarantee
  kBorrowed,     // grew on GPUs lent from other tenants' idle guarantee
  kReclaimed,    // grew on GPUs taken back from others
  kShrunk,       // shrunk for another workload (or for a smaller pool)
  kSuspended,    // whole-job mode: suspended for another workload
  kPoolFull,     // wanted more; nothing idle and nothing it may take
  kBorrowLimit,  // wanted more; its tenant is at its borrow limit or the engine's quota
  kRegrowHeld,   // wanted more; shrunk by the pool too recently to grow back yet
  kPoolUnknown,  // the pool's size is unknown: holding
};
std::string_view GrantReasonName(GrantReason r);

struct Grant {
  int replicas = 0;
  GrantReason reason = GrantReason::kAsWanted;
  std::string detail;          // the reason with names and numbers
  int64_t reclaimed_gpus = 0;  // taken from others for this workload
};

struct TenantUsage {
  int64_t wanted = 0;    // GPUs its workloads asked for
  int64_t granted = 0;   // GPUs granted
  int64_t borrowed = 0;  // granted beyond the guarantee
};

struct Allocation {
  std::vector<Grant> grants;         // one per claim, in order
  std::vector<TenantUsage> tenants;  // one per tenant, in order
  int64_t pool_gpus = 0;
  int64_t granted_gpus = 0;
  int64_t reclaimed_gpus = 0;  // taken back this tick
  bool pool_known = false;
};

struct AllocatorInput {
  std::optional<int64_t> pool_gpus;  // nullopt: unknown (missing data)
  std::string pool_detail;           // why unknown, or where the size came from
  std::vector<TenantSpec> tenants;
  std::vector<std::optional<int64_t>> tenant_ceilings;  // per tenant (or empty); engine quota
  std::vector<std::string> priorities;                  // class names by rank, for the reasons
  ReclaimMode mode = ReclaimMode::kShrink;
  std::vector<PoolClaim> claims;
  // GPU-seconds of useful work lost if claim `i` is shrunk from its current size to `to`
  // replicas (restart plus slowdown); only asked for elastic claims. May be empty: then the
  // GPUs freed count as the cost.
  std::function<double(size_t i, int to)> shrink_cost;
};

class PoolAllocator {
 public:
  virtual ~PoolAllocator() = default;
  virtual Allocation Allocate(const AllocatorInput& in) const = 0;
};

}  // namespace aiscale
