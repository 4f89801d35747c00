// Allocator: one pure pass over every workload of a shared GPU pool that turns what each
// workload wants this tick into what it is granted, and says why.
//
// Rules, in order (docs/pool.md):
//   0. The pool's size unknown (the engine could not tell): nobody grows, nobody is shrunk for
//      the pool; a workload's own scale-down stands.
//   1. A workload's own scale-down is granted at once; what it frees is idle.
//   2. The pool smaller than what is held (a node lost): the excess is taken back as in 4,
//      borrowed GPUs first, and below floors only when floors alone exceed the pool (a workload
//      the pool may not shrink, paused or pinned, last).
//   3. Growth within the tenant's guarantee, highest priority first. When idle GPUs do not cover
//      it, GPUs are taken back, cheapest source first: other tenants' borrowed GPUs (elastic
//      training shrunk where the lost progress is smallest, then serving, lowest priority
//      first), then lower-priority workloads of the same tenant (elastic training, then serving).
//      In whole-job mode an elastic job is suspended whole instead of shrunk, and resumes only
//      when its whole size fits (gang admission, as Kueue does).
//   4. Growth beyond the guarantee (borrowing), class by class from the highest priority: idle
//      GPUs shared by weighted max-min across tenants (weights, never past a tenant's borrow
//      limit or the engine's quota ceiling), then taken back from strictly lower priorities.
//      A workload the pool may not shrink never borrows, so an owner can always reclaim.
//   5. A workload the pool shrank is not regrown before its hold ends (the caller sets
//      `regrow_held`): a job is not shrunk and regrown inside one restart's worth of time.
// Sizes move in multiples of each workload's granularity; no grant is below the workload's floor
// (unless rule 2 must) and the sum of grants never exceeds the pool. Deterministic: ties break by
// claim order. Pure: no clock, no I/O; the caller keeps any state (the hold times).
#pragma once

#include "core/pool_allocator.h"

namespace aiscale::decide {

// The pure allocator behind the core seam, so the Controller (which sees core only) runs it.
class Allocator final : public PoolAllocator {
 public:
  Allocation Allocate(const AllocatorInput& in) const override;
};

Allocation Allocate(const AllocatorInput& in);

}  // namespace aiscale::decide
