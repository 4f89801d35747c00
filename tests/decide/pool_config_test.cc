// The `pool:` section and each workload's pool fields: defaults, and every bad input reported
// at its file:line with the field path.
#include "decide/pool_config.h"

#include <gtest/gtest.h>

#include "decide/pipeline.h"

namespace aiscale::decide {
namespace {

struct Parsed {
  PoolSpec pool;
  std::vector<WorkloadSpec> workloads;
  std::string errors;  // one per line
};

// `yaml` has a `pool` map (or none) and a `workloads` list.
Parsed Parse(const std::string& yaml) {
  config::ConfigErrors errors;
  const config::ConfigNode root = config::ParseConfig(yaml, "c.yaml", errors);
  Parsed out;
  const bool has_pool = root.Has("pool");
  if (has_pool) out.pool = ParsePool(root.Child("pool"));
  for (const config::ConfigNode& w : root.Child("workloads").Items()) {
    WorkloadSpec spec = ReadWorkloadFields(w, 15);
    ReadPoolMembership(w, has_pool ? &out.pool : nullptr, spec);
    out.workloads.push_back(spec);
  }
  out.errors = errors.ToStatus().ok() ? "" : errors.ToStatus().message();
  return out;
}

TEST(PoolConfig, Defaults) {
  const Parsed p = Parse(R"(
pool: {size: 32}
workloads:
  - {name: chat, kind: InferenceService}
  - {name: bert, kind: TrainingJob, min_replicas: 2, max_replicas: 8}
  - {name: etl, kind: Job}
)");
  ASSERT_EQ(p.errors, "");
  ASSERT_EQ(p.pool.tenants.size(), 1u);
  EXPECT_EQ(p.pool.tenants[0].name, "default");
  EXPECT_FALSE(p.pool.tenants[0].borrow_limit.has_value());
  EXPECT_EQ(p.pool.priorities, (std::vector<std::string>{"serving", "training", "batch"}));
  EXPECT_EQ(p.pool.reclaim, ReclaimMode::kShrink);
  EXPECT_EQ(p.workloads[0].pool.priority, "serving");
  EXPECT_FALSE(p.workloads[0].pool.shrinkable);
  EXPECT_TRUE(p.workloads[0].pool.reducible);
  EXPECT_EQ(p.workloads[1].pool.priority, "training");
  EXPECT_TRUE(p.workloads[1].pool.shrinkable);
  EXPECT_EQ(p.workloads[1].pool.shrink_floor, 2);
  EXPECT_EQ(p.workloads[2].pool.priority, "batch");
  EXPECT_EQ(p.workloads[2].pool.tenant, "default");
}

TEST(PoolConfig, TenantsFromTheNamespaceOrTheOnlyOne) {
  const Parsed p = Parse(R"(
pool:
  size: 16
  tenants: [{name: team-a, guaranteed: 8, borrow_limit: 4, weight: 2}, {name: team-b, guaranteed: 8}]
workloads:
  - {name: chat, kind: InferenceService, namespace: team-a}
  - {name: bert, kind: TrainingJob, tenant: team-b, shrink_floor: 2, min_replicas: 1, max_replicas: 4, gpus_per_replica: 8}
)");
  ASSERT_EQ(p.errors, "");
  EXPECT_EQ(p.workloads[0].pool.tenant, "team-a");
  EXPECT_EQ(p.workloads[1].pool.tenant, "team-b");
  EXPECT_EQ(p.workloads[1].pool.gpus_per_replica, 8);
  EXPECT_EQ(*p.pool.tenants[0].borrow_limit, 4);
  EXPECT_EQ(p.pool.tenants[0].weight, 2);
}

struct BadCase {
  std::string name;
  std::string yaml;
  std::string error;  // a substring of the errors, position included
};

TEST(PoolConfig, SizeFromSlurm) {
  const Parsed p = Parse(
      "pool: {from: slurm, slurm: {partition: gpu, slurm_conf: /etc/slurm/slurm.conf}}\n"
      "workloads: []\n");
  ASSERT_EQ(p.errors, "");
  EXPECT_FALSE(p.pool.size.has_value());
  EXPECT_EQ(p.pool.from, "slurm");
  EXPECT_EQ(p.pool.slurm.partition, "gpu");
  EXPECT_EQ(p.pool.slurm.slurm_conf, "/etc/slurm/slurm.conf");
}

TEST(PoolConfig, BadInputIsAnErrorAtItsField) {
  const std::vector<BadCase> cases = {
      {"guarantees above the pool",
       "pool: {size: 8, tenants: [{name: a, guaranteed: 6}, {name: b, guaranteed: 6}]}\n"
       "workloads: []\n",
       "c.yaml:1:26: pool.tenants: the tenants' guarantees add up to 12 GPUs, more than the "
       "pool's size of 8"},
      {"unknown tenant",
       "pool: {size: 8, tenants: [{name: a}, {name: b}]}\n"
       "workloads:\n  - {name: x, kind: InferenceService, tenant: c}\n",
       "c.yaml:3:47: workloads[0].tenant: unknown tenant 'c' (pool.tenants: a, b)"},
      {"tenant missing among several",
       "pool: {size: 8, tenants: [{name: a}, {name: b}]}\n"
       "workloads:\n  - {name: x, kind: InferenceService}\n",
       "missing 'tenant': the pool has several (a, b)"},
      {"priority class listed twice is a cycle",
       "pool: {size: 8, priorities: [serving, batch, serving]}\nworkloads: []\n",
       "pool.priorities[2]: priority class 'serving' is listed twice (also at [0]): the order "
       "would be a cycle"},
      {"unknown priority",
       "pool: {size: 8, priorities: [gold, silver]}\n"
       "workloads:\n  - {name: x, kind: InferenceService}\n",
       "unknown priority class 'serving' (the default for kind InferenceService) "
       "(pool.priorities: gold, silver)"},
      {"tenant listed twice", "pool: {size: 8, tenants: [{name: a}, {name: a}]}\nworkloads: []\n",
       "tenant 'a' is listed twice"},
      {"negative size", "pool: {size: -1}\nworkloads: []\n", "pool.size"},
      {"NaN guarantee", "pool: {size: 4, tenants: [{name: a, guaranteed: .nan}]}\nworkloads: []\n",
       "pool.tenants[0].guaranteed"},
      {"size and from", "pool: {size: 4, from: slurm}\nworkloads: []\n", "give size or from"},
      {"neither size nor from", "pool: {tenants: [{name: a}]}\nworkloads: []\n",
       "missing 'size' (GPUs) or 'from'"},
      {"unknown engine", "pool: {from: nomad}\nworkloads: []\n", "pool.from"},
      {"kubernetes section without from: kubernetes",
       "pool: {size: 4, kubernetes: {timeout: 5s}}\nworkloads: []\n",
       "pool.kubernetes: needs from: kubernetes"},
      {"kubernetes section misspelt",
       "pool: {from: kubernetes, kubernetes: {auht: {}}}\nworkloads: []\n", "pool.kubernetes.auht"},
      {"slurm section without from: slurm",
       "pool: {size: 4, slurm: {partition: gpu}}\nworkloads: []\n",
       "pool.slurm: needs from: slurm"},
      {"slurm section, another engine",
       "pool: {from: kubernetes, slurm: {partition: gpu}}\n"
       "workloads: []\n",
       "pool.slurm: is where `from: slurm` reads the pool's size"},
      {"slurm section misspelt", "pool: {from: slurm, slurm: {partiton: gpu}}\nworkloads: []\n",
       "pool.slurm.partiton"},
      {"slurm section not a map", "pool: {from: slurm, slurm: gpu}\nworkloads: []\n",
       "pool.slurm: must be a map: {partition, slurm_conf}"},
      {"no tenants", "pool: {size: 4, tenants: []}\nworkloads: []\n",
       "must list at least one tenant"},
      {"pool fields without a pool",
       "workloads:\n  - {name: x, kind: InferenceService, tenant: a}\n",
       "workloads[0].tenant: tenant needs a pool"},
      {"shrink floor off the group",
       "pool: {size: 64}\nworkloads:\n  - {name: x, kind: TrainingJob, min_replicas: 2, "
       "max_replicas: 8, granularity: 2, shrink_floor: 3}\n",
       "shrink_floor 3 is not a multiple of granularity 2"},
      {"shrink floor below min",
       "pool: {size: 64}\nworkloads:\n  - {name: x, kind: TrainingJob, min_replicas: 2, "
       "max_replicas: 8, shrink_floor: 1}\n",
       "shrink_floor 1 must be within [min_replicas, max_replicas] = [2, 8]"},
      {"zero GPUs a replica",
       "pool: {size: 64}\nworkloads:\n  - {name: x, kind: Job, gpus_per_replica: 0}\n",
       "workloads[0].gpus_per_replica"},
      {"unknown pool field", "pool: {size: 4, quota: 3}\nworkloads: []\n", "pool.quota"},
      {"bad reclaim mode", "pool: {size: 4, reclaim: preempt}\nworkloads: []\n", "pool.reclaim"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Parsed p = Parse(c.yaml);
    EXPECT_NE(p.errors.find(c.error), std::string::npos) << p.errors;
  }
}

}  // namespace
}  // namespace aiscale::decide
