// The many-tenant comparison on two tenants with hand-made curves, where every figure can be
// worked out by hand: a pool of 8 GPUs, tenants a and b guaranteed 4 each, one decision a
// minute, restarts of 60 s. a asks for nothing, then 4 GPUs from minute 15 to 20; b asks for 8
// all along. Static quotas leave b 4 short all along; free borrowing lends b a's idle 4 at once;
// the pool lends them once idle for its lend delay (120 s, the default); both take them back at
// minute 15, in one tick.
#include "sim/tenant_report.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/runner.h"

namespace aiscale::sim {
namespace {

std::string Tenant(const std::string& name, const std::string& points) {
  return "    - {name: " + name + ", kind: GpuDemand, tenant: " + name +
         ", priority: training, shrinkable: true, min_replicas: 0, scale_to_zero: true,\n"
         "       max_replicas: 8, initial_replicas: 0,\n"
         "       policy: {name: hpa, tolerance: 0, metrics: [{signal: gpu_demand, type: External,\n"
         "                target: {type: AverageValue, value: 1}}]},\n"
         "       behavior: {scaleUp: {stabilizationWindowSeconds: 0, policies: [{type: Pods,\n"
         "                    value: 100, periodSeconds: 60}]},\n"
         "                  scaleDown: {stabilizationWindowSeconds: 0}},\n"
         "       demand: {restart_s: 60, trace: {format: points, points: " +
         points + "}}}\n";
}

const std::string kScenario =
    "apiVersion: aiscale.dev/v1alpha1\n"
    "kind: Scenario\n"
    "spec:\n"
    "  name: two-tenants\n"
    "  duration: 1h\n"
    "  control_period: 60s\n"
    "  scrape_interval: 60s\n"
    "  report_interval: 60s\n"
    "  cluster: {nodes: 16, gpus_per_node: 1, provisioning_delay: 0s}\n"
    "  pool:\n"
    "    size: 8\n"
    "    regrow_delay: 10m\n"
    "    tenants: [{name: a, guaranteed: 4}, {name: b, guaranteed: 4}]\n"
    "  workloads:\n" +
    Tenant("a", "[[0, 0], [900, 4], [1200, 0]]") + Tenant("b", "[[0, 8], [1200, 0]]") +
    "  compare:\n"
    "    - {label: static-quotas, role: static_quotas, pool: {tenants: [\n"
    "        {name: a, guaranteed: 4, borrow_limit: 0}, {name: b, guaranteed: 4, borrow_limit: "
    "0}]}}\n"
    "    - {label: free-borrowing, role: free_borrowing, pool: {regrow_delay: 0s, lend_delay: "
    "0s}}\n"
    "    - {label: aiscale-pool, role: pool}\n";

const nlohmann::json* Target(const nlohmann::json& c, const std::string& prefix) {
  for (const auto& t : c["targets"]) {
    if (t["target"].get<std::string>().rfind(prefix, 0) == 0) return &t;
  }
  return nullptr;
}

TEST(TenantReport, TwoTenantsByHand) {
  auto s = ParseScenario(kScenario, "two.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = RunScenario(*s, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->pool_comparison.is_null());  // the mixed-pool comparison is for other kinds
  const nlohmann::json& c = r->tenant_comparison;
  ASSERT_TRUE(c.is_object());
  ASSERT_EQ(c["runs"].size(), 3u);
  struct Want {
    const char* label;
    double a_pending, b_pending, reclaimed_gpu_minutes;
  };
  // The first decision is at minute 1: until then b's 8 are pending in every run. Then:
  // static quotas, b 4 short for 19 minutes; borrowing, b 4 short from minute 15 to 20, when
  // a takes its guarantee back, preempting 4 of b's busy GPUs (free, or 60 s each). The pool
  // lends a's 4 once they were idle for 120 s (the ticks at minutes 1 to 3), and b's HPA sees
  // the room one tick later: b is 4 short from minute 1 to 4 as well.
  const Want wants[] = {{"static-quotas", 0, 8 + 4 * 19, 0},
                        {"free-borrowing", 0, 8 + 4 * 5, 0},
                        {"aiscale-pool", 0, 8 + 4 * 3 + 4 * 5, 4 * 60 / 60.0}};
  for (size_t i = 0; i < 3; ++i) {
    const nlohmann::json& run = c["runs"][i];
    SCOPED_TRACE(wants[i].label);
    EXPECT_EQ(run["label"], wants[i].label);
    EXPECT_NEAR(run["tenants"]["a"]["pending_gpu_minutes"].get<double>(), wants[i].a_pending, 1e-9);
    EXPECT_NEAR(run["tenants"]["b"]["pending_gpu_minutes"].get<double>(), wants[i].b_pending, 1e-9);
    EXPECT_NEAR(run["pending_gpu_minutes"].get<double>(), wants[i].a_pending + wants[i].b_pending,
                1e-9);
    EXPECT_NEAR(run["reclaimed_gpu_minutes"].get<double>(), wants[i].reclaimed_gpu_minutes, 1e-9);
  }
  // a's guarantee was lent when it asked at minute 15: granted in that tick, working 60 s later.
  const nlohmann::json& pool = c["runs"][2]["tenants"]["a"];
  EXPECT_EQ(pool["lent_episodes"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(pool["lent_wait_to_grant_s"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(pool["lent_wait_to_ready_s"].get<double>(), 60);
  EXPECT_EQ(c["runs"][0]["tenants"]["a"]["lent_episodes"].get<int>(), 0);  // nothing lent

  const nlohmann::json* pending = Target(c, "pending GPU-minutes / static quotas");
  ASSERT_NE(pending, nullptr);
  EXPECT_NEAR((*pending)["value"].get<double>(), 40.0 / 84.0, 1e-9);
  EXPECT_TRUE((*pending)["met"].get<bool>());
  const nlohmann::json* reclaimed = Target(c, "reclaimed GPU-minutes");
  ASSERT_NE(reclaimed, nullptr);  // stated, not judged against a goal
  EXPECT_TRUE((*reclaimed)["stated"].get<bool>());
  EXPECT_FALSE(reclaimed->contains("goal"));
  EXPECT_NEAR((*reclaimed)["value"].get<double>(), 4.0, 1e-9);
  const nlohmann::json* ready = Target(c, "guarantee ready again");
  ASSERT_NE(ready, nullptr);
  EXPECT_DOUBLE_EQ((*ready)["goal"].get<double>(), 60 + 60);
  EXPECT_TRUE((*ready)["met"].get<bool>());
}

TEST(TenantReport, NullWithoutTenantsOrAPoolRun) {
  auto s = ParseScenario(kScenario, "two.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ScenarioResult none;
  EXPECT_TRUE(TenantComparison(*s, none).is_null());
}

}  // namespace
}  // namespace aiscale::sim
