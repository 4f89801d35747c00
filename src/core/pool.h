// The shared GPU pool as the engine sees it: PoolCapacity (how many GPUs aiscale's workloads may
// use now, and any per-tenant ceiling the engine enforces) and the PoolSource seam that reads it
// (Kubernetes nodes, pods and ResourceQuotas; Slurm gres; local slots; a configured number).
//
// Contract: Observe returns what the engine says now, or an error when it cannot tell (API down,
// command failed). An error is missing data: the Controller then holds every workload at its
// size (no growth, no shrink for the pool). Values are GPU counts >= 0; a source never reports a
// negative, NaN or partial count as a number. Thread-safe; may block up to its own deadline.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace aiscale {

// One tenant of the pool (a team; on Kubernetes a namespace): the GPUs it is guaranteed, the most
// it may borrow beyond them from others' idle guarantee, and its weight when idle GPUs are shared.
struct TenantSpec {
  std::string name;
  int64_t guaranteed = 0;               // GPUs
  std::optional<int64_t> borrow_limit;  // GPUs beyond `guaranteed`; nullopt: no limit
  double weight = 1;
};

// How GPUs are taken back when a workload needs them: shrink elastic jobs in group multiples
// where the lost progress is smallest (aiscale's way), or suspend a whole lower-priority job and
// resume it when room returns (Kueue's and Volcano's way; for comparison runs).
enum class ReclaimMode { kShrink, kWholeJob };

// The `pool:` section, parsed (decide/pool_config.h reads it; the same schema in a scenario and a
// controller config). `size` nullopt: the engine named by `from` says how many GPUs there are.
struct PoolSpec {
  std::optional<int64_t> size;
  std::string from;  // "" (size given) or the engine that reports it ("kubernetes", "slurm")
  // from: slurm: the partition whose usable nodes' gres GPUs make the pool ("" every partition)
  // and the SLURM_CONF to run sinfo with ("" aiscale's own environment). Read every collection.
  struct Slurm {
    std::string partition;
    std::string slurm_conf;
  } slurm;
  std::vector<TenantSpec> tenants;
  std::vector<std::string> priorities;  // class names, highest first
  ReclaimMode reclaim = ReclaimMode::kShrink;
  // A workload the pool shrank gets no GPUs back until this long after the shrink, and at least
  // twice its own restart cost (cold_start), so a job is not shrunk and regrown inside one
  // restart's worth of time.
  double regrow_delay_s = 0;
  // A drop in the engine's reported size takes effect only once it has lasted this long (a node
  // flapping NotReady is not a reason to shrink a job); a rise takes effect at once.
  double shrink_grace_s = 60;
  // Idle GPUs are lent to elastic workloads beyond their guarantee only once they have been
  // idle this long: a job is not grown into a trough shorter than its restart.
  double lend_delay_s = 120;
  // Off: the allocator is not run (comparison runs: each workload scaled on its own, as if
  // GPUs were unlimited; the engine still cannot start more than the pool holds).
  bool allocate = true;

  int TenantIndex(std::string_view name) const;   // -1 when unknown
  int PriorityRank(std::string_view name) const;  // 0 is the highest; -1 when unknown
};

// A workload's place in the pool (its `tenant`, `priority`, `gpus_per_replica`, `shrinkable`,
// `shrink_floor` fields).
struct PoolMembership {
  std::string tenant;
  std::string priority;
  int gpus_per_replica = 1;
  // May the pool shrink it for others (elastic training), and to how many replicas at least.
  bool shrinkable = false;
  int shrink_floor = 0;
  // Not shrinkable but reducible toward min_replicas for a higher priority or an owner (a
  // service); false for a training job that may not be shrunk (the pool never touches it).
  bool reducible = true;
  // A training job: each resize restarts all of it (its kind says so).
  bool restarts_to_resize = false;
};

struct PoolCapacity {
  int64_t gpus = 0;  // usable by aiscale's workloads (what others hold already taken out)
  // Tenant name -> the most GPUs the engine lets that tenant hold (a Kubernetes ResourceQuota on
  // requests.nvidia.com/gpu); absent: no ceiling from the engine.
  std::map<std::string, int64_t, std::less<>> tenant_ceilings;
  // Where the number came from, for the Decision ("32 GPUs on 4 Ready nodes, 4 held by pods
  // aiscale does not manage").
  std::string detail;
  // The PoolSource::Basis this was counted with; PoolWatch does not use a reading of an older one.
  uint64_t basis = 0;
};

class PoolSource {
 public:
  virtual ~PoolSource() = default;
  virtual std::string_view Name() const = 0;
  virtual Result<PoolCapacity> Observe() = 0;
  // The version of the workloads aiscale manages, as the source would count them now. A source
  // whose answer depends on them (on Kubernetes, whose pods are others') changes it as they come
  // and go and stamps each PoolCapacity with the one it used. 0: never changes.
  virtual uint64_t Basis() const { return 0; }
};

// "1 GPU", "12 GPUs": how the pool's texts (Decisions, sources' details) count GPUs.
inline std::string GpuCount(int64_t n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

// A pool of a configured size (`pool: {size: 16}`, and the local engine's slot count).
class FixedPoolSource final : public PoolSource {
 public:
  explicit FixedPoolSource(int64_t gpus) : gpus_(gpus) {}
  std::string_view Name() const override { return "configured"; }
  Result<PoolCapacity> Observe() override {
    PoolCapacity c;
    c.gpus = gpus_;
    c.detail = GpuCount(gpus_) + " (configured)";
    return c;
  }

 private:
  int64_t gpus_;
};

inline int PoolSpec::TenantIndex(std::string_view name) const {
  for (size_t i = 0; i < tenants.size(); ++i) {
    if (tenants[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

inline int PoolSpec::PriorityRank(std::string_view name) const {
  for (size_t i = 0; i < priorities.size(); ++i) {
    if (priorities[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace aiscale
