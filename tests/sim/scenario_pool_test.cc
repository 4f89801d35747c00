// A scenario's shared pool: compare entries that set each workload's policy and run the pool
// differently, their errors at file:line, and a small pooled run whose grants never exceed the
// pool and whose decisions say what the pool did.
#include "sim/scenario_pool.h"

#include <gtest/gtest.h>

#include "sim/runner.h"

namespace aiscale::sim {
namespace {

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// Two training jobs in a 32-GPU pool (4 nodes of 8 GPUs); `compare` and `extra` are spliced in.
std::string Pooled(const std::string& compare, const std::string& pool_extra = "",
                   const std::string& job_extra = "") {
  return "apiVersion: aiscale.dev/v1alpha1\n"
         "kind: Scenario\n"
         "spec:\n"
         "  name: p\n"
         "  duration: 2h\n"
         "  control_period: 30s\n"
         "  cluster: {nodes: 8, gpus_per_node: 8, provisioning_delay: 0s}\n"
         "  pool:\n"
         "    size: 32\n"
         "    tenants: [{name: a, guaranteed: 16}, {name: b, guaranteed: 16}]\n" +
         pool_extra +
         "  workloads:\n"
         "    - {name: x, kind: TrainingJob, tenant: a, min_replicas: 1, max_replicas: 4,\n"
         "       initial_replicas: 2, policy: {name: static, replicas: 2},\n"
         "       job: {total_steps: 100000, epochs: 2}" +
         job_extra +
         "}\n"
         "    - {name: y, kind: TrainingJob, tenant: b, priority: batch, min_replicas: 1,\n"
         "       max_replicas: 4, initial_replicas: 2, policy: {name: static, replicas: 2},\n"
         "       job: {total_steps: 100000, epochs: 2}}\n"
         "  compare:\n" +
         compare;
}

TEST(ScenarioPool, CompareEntriesSetPoliciesAndThePool) {
  auto s =
      ParseScenario(Pooled("    - {label: grow, role: pool, workloads: {x: {name: static, "
                           "replicas: 4}}}\n"
                           "    - {label: off, role: static_partition, pool: off}\n"
                           "    - {label: kueue, role: whole_job, pool: {reclaim: whole_job}}\n"
                           "    - static\n"),
                    "p.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->pool.has_value());
  EXPECT_EQ(s->workloads[0].spec.pool.gpus_per_replica, 8);  // from the model: a node
  auto runs = s->Runs({});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 4u);
  EXPECT_EQ((*runs)[0].role, "pool");
  EXPECT_EQ((*runs)[0].policy_nodes[0].Int("replicas", 0), 4);
  EXPECT_EQ((*runs)[0].policy_nodes[1].Int("replicas", 0), 2);  // y keeps its own
  EXPECT_TRUE((*runs)[0].pool->allocate);
  EXPECT_FALSE((*runs)[1].pool->allocate);
  EXPECT_EQ((*runs)[2].pool->reclaim, ReclaimMode::kWholeJob);
  EXPECT_EQ((*runs)[2].pool->tenants.size(), 2u);  // the rest of the scenario's pool
  EXPECT_EQ((*runs)[3].pool->reclaim, ReclaimMode::kShrink);
}

TEST(ScenarioPool, BadInputIsAnErrorAtItsLine) {
  struct Case {
    std::string name, yaml, want;
  };
  const std::vector<Case> cases = {
      {"unknown workload in an entry", Pooled("    - {label: z, workloads: {nope: static}}\n"),
       "p.yaml:19:"},
      {"unknown workload, by path", Pooled("    - {label: z, workloads: {nope: static}}\n"),
       "spec.compare[0].workloads.nope: no workload named 'nope'"},
      {"unknown role", Pooled("    - {label: z, role: best}\n"), "spec.compare[0].role"},
      {"bad pool override", Pooled("    - {label: z, pool: on}\n"),
       "'off' or a map of pool fields to replace"},
      {"override read by the same reader", Pooled("    - {label: z, pool: {reclaim: maybe}}\n"),
       "pool.reclaim"},
      {"a pool read from an engine", Pooled("    - static\n", "    from: slurm\n"),
       "give size or from, not both"},
      {"a model that says otherwise", Pooled("    - static\n", "", ", gpus_per_replica: 4"),
       "the model's replica holds 8 GPUs, not 4"},
      {"more to start with than the pool",
       Replace(Pooled("    - static\n"), "initial_replicas: 2, policy",
               "initial_replicas: 4, policy"),
       "the workloads start on 48 GPUs, more than the pool's 32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto s = ParseScenario(c.yaml, "p.yaml");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find(c.want), std::string::npos) << s.status().message();
  }
  auto no_pool = ParseScenario(
      Replace(Replace(Pooled("    - {label: z, pool: off}\n"),
                      "    tenants: [{name: a, guaranteed: 16}, {name: b, guaranteed: 16}]\n", ""),
              "  pool:\n    size: 32\n", ""),
      "p.yaml");
  ASSERT_FALSE(no_pool.ok());
  EXPECT_NE(no_pool.status().message().find("the scenario has no pool (spec.pool) to run"),
            std::string::npos)
      << no_pool.status().message();
}

TEST(ScenarioPool, ARunThatWouldStartPastThePoolIsAnError) {
  // A compare entry's static size is held from the start: 4 nodes of x and 2 of y are 48 GPUs.
  auto s = ParseScenario(
      Pooled("    - {label: big, workloads: {x: {name: static, replicas: 4}}}\n"), "p.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = RunScenario(*s, RunOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("its workloads start on 48 GPUs, more than the pool's 32"),
            std::string::npos)
      << r.status().message();
}

TEST(ScenarioPool, APooledRunNeverGrantsBeyondThePoolAndSaysWhy) {
  // x (tenant a, priority training) asks for 4 nodes; y (tenant b, batch) holds 2: a's 16 GPUs
  // of guarantee are 2 nodes, so x's other 2 come from b's idle... there is none: y holds its
  // guarantee. x is granted 2 and the pool says why.
  auto s = ParseScenario(Replace(Pooled("    - {label: grow, role: pool}\n"),
                                 "initial_replicas: 2, policy: {name: static, replicas: 2}",
                                 "initial_replicas: 2, policy: {name: static, replicas: 4}"),
                         "p.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  RunOptions opt;
  auto r = RunScenario(*s, opt);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const RunResult& run = r->runs[0];
  ASSERT_FALSE(run.decisions.empty());
  bool saw_full = false;
  for (const Decision& d : run.decisions) {
    ASSERT_TRUE(d.pool.active) << d.Summary();
    if (d.workload == "x") {
      EXPECT_LE(d.constrained, 4);
      saw_full = saw_full || d.pool.reason == "pool_full";
    }
  }
  EXPECT_TRUE(saw_full);
  EXPECT_LE(run.pool["utilization"].get<double>(), 1.0);
  EXPECT_GT(run.pool["utilization"].get<double>(), 0.99);  // 4 nodes of 4 held all along
}

}  // namespace
}  // namespace aiscale::sim
