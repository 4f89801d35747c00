#include "decide/pool_config.h"

#include <set>

#include "core/numeric.h"

namespace aiscale::decide {
namespace {

// Pool sizes and guarantees, in GPUs: far above any cluster, far below int64 trouble when
// multiplied by a replica count (kMaxReplicaCount) and summed over 10^5 workloads.
constexpr double kMaxPoolGpus = 1e7;
constexpr int kMaxGpusPerReplica = 4096;

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<TenantSpec> ParseTenants(const config::ConfigNode& list) {
  std::vector<TenantSpec> out;
  std::set<std::string> names;
  for (const config::ConfigNode& t : list.Items()) {
    if (!t.IsMap()) {
      t.Error("must be a map with name, guaranteed, borrow_limit, weight");
      continue;
    }
    t.CheckKnown({"name", "guaranteed", "borrow_limit", "weight"});
    TenantSpec spec;
    spec.name = t.RequiredString("name");
    spec.guaranteed =
        static_cast<int64_t>(t.Number("guaranteed", 0, config::Between(0, kMaxPoolGpus)));
    if (t.Has("borrow_limit")) {
      spec.borrow_limit =
          static_cast<int64_t>(t.Number("borrow_limit", 0, config::Between(0, kMaxPoolGpus)));
    }
    spec.weight = t.Number("weight", 1, config::Between(1e-3, 1e3));
    if (!spec.name.empty() && !names.insert(spec.name).second) {
      t.ErrorAt("name", "tenant '" + spec.name + "' is listed twice");
    }
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<std::string> ParsePriorities(const config::ConfigNode& pool) {
  if (!pool.Has("priorities")) return {"serving", "training", "batch"};
  std::vector<std::string> out;
  for (const config::ConfigNode& p : pool.Child("priorities").Items()) {
    if (!p.raw().IsScalar() || p.raw().Scalar().empty()) {
      p.Error("a priority class is a name, e.g. serving");
      continue;
    }
    const std::string name = p.raw().Scalar();
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == name) {
        p.Error("priority class '" + name + "' is listed twice (also at [" + std::to_string(i) +
                "]): the order would be a cycle");
      }
    }
    out.push_back(name);
  }
  if (out.empty() && pool.Child("priorities").IsSequence()) {
    pool.ErrorAt("priorities", "must list at least one priority class");
  }
  return out;
}

void CheckGuarantees(const config::ConfigNode& pool, const PoolSpec& spec) {
  if (!spec.size) return;
  int64_t sum = 0;
  for (const TenantSpec& t : spec.tenants) sum += t.guaranteed;
  if (sum > *spec.size) {
    pool.ErrorAt("tenants", "the tenants' guarantees add up to " + std::to_string(sum) +
                                " GPUs, more than the pool's size of " +
                                std::to_string(*spec.size));
  }
}

// slurm: {partition, slurm_conf}: where `from: slurm` reads the pool's GPUs.
void ParseSlurmSource(const config::ConfigNode& pool, PoolSpec& spec) {
  const config::ConfigNode s = pool.Child("slurm");
  if (!s.IsDefined()) return;
  if (spec.from != "slurm") {
    pool.ErrorAt("slurm",
                 "is where `from: slurm` reads the pool's size; set from: slurm or drop it");
    return;
  }
  if (!s.IsMap()) {
    s.Error("must be a map: {partition, slurm_conf}");
    return;
  }
  s.CheckKnown({"partition", "slurm_conf"});
  spec.slurm.partition = s.String("partition", "");
  spec.slurm.slurm_conf = s.ResolvePath(s.String("slurm_conf", ""));
}

// kubernetes: {auth, timeout}: how `from: kubernetes` reaches the API server. Its fields are
// read by the controller config (cli/, where the engines' connection types live); here only
// where it may appear.
void CheckKubernetesSource(const config::ConfigNode& pool, const PoolSpec& spec) {
  const config::ConfigNode k = pool.Child("kubernetes");
  if (!k.IsDefined()) return;
  if (spec.from != "kubernetes") {
    pool.ErrorAt(
        "kubernetes",
        "is how `from: kubernetes` reaches the API server; set from: kubernetes or drop it");
  } else if (!k.IsMap()) {
    k.Error("must be a map: {auth, timeout}");
  } else {
    k.CheckKnown({"auth", "timeout"});
  }
}

// size: a number, or from: an engine that reports it; exactly one of the two.
void ParseSize(const config::ConfigNode& pool, PoolSpec& spec) {
  if (pool.Has("from")) {
    spec.from = pool.Enum("from", "", PoolSizeEngines());
    if (pool.Has("size")) pool.ErrorAt("size", "give size or from, not both");
    ParseSlurmSource(pool, spec);
    CheckKubernetesSource(pool, spec);
    return;
  }
  if (pool.Has("slurm")) pool.ErrorAt("slurm", "needs from: slurm");
  if (pool.Has("kubernetes")) pool.ErrorAt("kubernetes", "needs from: kubernetes");
  if (!pool.Has("size")) {
    pool.Error("missing 'size' (GPUs) or 'from' (" + Join(PoolSizeEngines()) + ")");
    return;
  }
  spec.size = static_cast<int64_t>(pool.Number("size", 0, config::Between(0, kMaxPoolGpus)));
}

std::string DefaultPriority(const std::string& kind) {
  if (kind == "InferenceService") return "serving";
  if (IsTrainingKind(kind)) return "training";
  return "batch";
}

std::string DefaultTenant(const PoolSpec& pool, const WorkloadSpec& spec) {
  if (!spec.ref.namespace_.empty() && pool.TenantIndex(spec.ref.namespace_) >= 0) {
    return spec.ref.namespace_;  // Kubernetes: tenants are namespaces
  }
  return pool.tenants.size() == 1 ? pool.tenants[0].name : "";
}

void ReadTenantAndPriority(const config::ConfigNode& w, const PoolSpec& pool, PoolMembership& m,
                           const WorkloadSpec& spec) {
  std::vector<std::string> tenants;
  for (const TenantSpec& t : pool.tenants) tenants.push_back(t.name);
  m.tenant = w.String("tenant", DefaultTenant(pool, spec));
  if (m.tenant.empty() && !w.Has("tenant")) {
    w.Error("missing 'tenant': the pool has several (" + Join(tenants) + ")");
  } else if (pool.TenantIndex(m.tenant) < 0) {
    w.ErrorAt("tenant", "unknown tenant '" + m.tenant + "' (pool.tenants: " + Join(tenants) + ")");
  }
  m.priority = w.String("priority", DefaultPriority(spec.ref.kind));
  if (pool.PriorityRank(m.priority) < 0) {
    const std::string where =
        w.Has("priority") ? "" : " (the default for kind " + spec.ref.kind + ")";
    w.ErrorAt("priority", "unknown priority class '" + m.priority + "'" + where +
                              " (pool.priorities: " + Join(pool.priorities) + ")");
  }
}

void ReadShrink(const config::ConfigNode& w, PoolMembership& m, const WorkloadSpec& spec) {
  m.shrinkable = w.Bool("shrinkable", IsTrainingKind(spec.ref.kind));
  m.reducible = !IsTrainingKind(spec.ref.kind);
  m.restarts_to_resize = IsTrainingKind(spec.ref.kind);
  m.shrink_floor = w.Int("shrink_floor", spec.min_replicas, config::Between(0, kMaxReplicaCount));
  if (!w.Has("shrink_floor")) return;
  if (m.shrink_floor < spec.min_replicas || m.shrink_floor > spec.max_replicas) {
    w.ErrorAt("shrink_floor", "shrink_floor " + std::to_string(m.shrink_floor) +
                                  " must be within [min_replicas, max_replicas] = [" +
                                  std::to_string(spec.min_replicas) + ", " +
                                  std::to_string(spec.max_replicas) + "]");
  } else if (spec.granularity > 0 && m.shrink_floor % spec.granularity != 0) {
    w.ErrorAt("shrink_floor", "shrink_floor " + std::to_string(m.shrink_floor) +
                                  " is not a multiple of granularity " +
                                  std::to_string(spec.granularity) + " (the model-parallel group)");
  }
}

}  // namespace

const std::vector<std::string>& PoolWorkloadFields() {
  static const std::vector<std::string> kFields = {"tenant", "priority", "gpus_per_replica",
                                                   "shrinkable", "shrink_floor"};
  return kFields;
}

const std::vector<std::string>& PoolSizeEngines() {
  static const std::vector<std::string> kEngines = {"kubernetes", "slurm"};
  return kEngines;
}

bool IsTrainingKind(const std::string& kind) {
  return kind == "TrainingJob" || kind == "PyTorchJob";
}

PoolSpec ParsePool(const config::ConfigNode& pool) {
  PoolSpec spec;
  if (!pool.IsMap()) {
    pool.Error("must be a map with size (or from), tenants, priorities");
    return spec;
  }
  pool.CheckKnown({"size", "from", "tenants", "priorities", "reclaim", "regrow_delay",
                   "shrink_grace", "lend_delay", "slurm", "kubernetes"});
  ParseSize(pool, spec);
  spec.tenants = ParseTenants(pool.Child("tenants"));
  if (spec.tenants.empty() && !pool.Has("tenants")) spec.tenants.push_back({"default", 0, {}, 1});
  if (spec.tenants.empty()) pool.ErrorAt("tenants", "must list at least one tenant");
  spec.priorities = ParsePriorities(pool);
  spec.reclaim = pool.Enum("reclaim", "shrink", {"shrink", "whole_job"}) == "whole_job"
                     ? ReclaimMode::kWholeJob
                     : ReclaimMode::kShrink;
  spec.regrow_delay_s = pool.DurationSeconds("regrow_delay", 0, config::Between(0, 7 * 86400));
  spec.shrink_grace_s =
      pool.DurationSeconds("shrink_grace", spec.shrink_grace_s, config::Between(0, 86400));
  spec.lend_delay_s =
      pool.DurationSeconds("lend_delay", spec.lend_delay_s, config::Between(0, 86400));
  CheckGuarantees(pool, spec);
  return spec;
}

void ReadPoolMembership(const config::ConfigNode& w, const PoolSpec* pool, WorkloadSpec& spec) {
  if (!pool) {
    for (const std::string& f : PoolWorkloadFields()) {
      if (w.Has(f)) w.ErrorAt(f, f + " needs a pool: add a spec.pool section (size, tenants)");
    }
    return;
  }
  PoolMembership& m = spec.pool;
  ReadTenantAndPriority(w, *pool, m, spec);
  m.gpus_per_replica = w.Int("gpus_per_replica", 1, config::Between(1, kMaxGpusPerReplica));
  ReadShrink(w, m, spec);
}

}  // namespace aiscale::decide
