#include "cli/controller_config.h"

#include <gtest/gtest.h>

namespace aiscale::cli {
namespace {

Result<ControllerConfig> Parse(const std::string& text, config::ConfigErrors& errs) {
  return ParseControllerConfig(config::ParseConfig(text, "c.yaml", errs));
}

constexpr const char* kHeader = "apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\n";

// Every error of the header plus `spec`; empty when it parsed.
std::string Errors(const std::string& spec) {
  config::ConfigErrors errs;
  auto cfg = Parse(kHeader + spec, errs);
  if (cfg.ok()) return "";
  return errs.empty() ? cfg.status().message() : errs.ToStatus().message();
}

// A store map with one workload beside it.
std::string WithStore(const std::string& store) {
  return "spec:\n  store: " + store +
         "\n  workloads: [{name: a, kind: D, policy: {name: static}}]\n";
}

TEST(ControllerConfig, ReadsFieldsAndDefaults) {
  config::ConfigErrors errs;
  auto cfg = Parse(R"(apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
spec:
  period: 30s
  store: /tmp/x.db
  workloads:
    - name: a
      kind: Deployment
      namespace: ns
      max_replicas: 8
      policy: {name: static, replicas: 3}
    - name: b
      kind: InferenceService
      staleness: 2m
      cold_start: 90s
      policy: {name: static-peak}
)",
                   errs);
  ASSERT_TRUE(cfg.ok()) << errs.ToStatus().message();
  EXPECT_DOUBLE_EQ(cfg->period_s, 30);
  EXPECT_EQ(cfg->store_path, "/tmp/x.db");
  ASSERT_EQ(cfg->workloads.size(), 2u);
  const auto& a = cfg->workloads[0];
  EXPECT_EQ(a.ref.Key(), "ns/a");
  EXPECT_EQ(a.ref.kind, "Deployment");
  EXPECT_DOUBLE_EQ(a.staleness_s, 90);  // 3 periods
  EXPECT_EQ(a.pipeline.policy->Name(), "static");
  EXPECT_EQ(a.max_replicas, 8);
  ASSERT_NE(a.pipeline.constraints, nullptr);
  EXPECT_EQ(a.pipeline.constraints->Constrain(20, 1, std::nullopt).desired, 8);
  EXPECT_EQ(a.pipeline.stabilizer, nullptr);  // static: no behavior, no HPA defaults
  EXPECT_FALSE(a.target.has_value());
  const auto& b = cfg->workloads[1];
  EXPECT_EQ(b.ref.Key(), "b");
  EXPECT_DOUBLE_EQ(b.staleness_s, 120);
  EXPECT_DOUBLE_EQ(b.cold_start_s, 90);
  EXPECT_EQ(b.pipeline.policy->Name(), "static-peak");
  EXPECT_TRUE(b.signals.empty());
  EXPECT_EQ(cfg->run_dir, "/tmp/x.db.run");
  EXPECT_EQ(cfg->server.host, "127.0.0.1");
}

TEST(ControllerConfig, MissingPiecesAreErrors) {
  struct Case {
    const char* name;
    std::string spec;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"no workloads", "spec: {period: 15s}\n", "spec: missing required field 'workloads'"},
      {"empty workloads", "spec: {workloads: []}\n", "spec.workloads: must list at least one"},
      {"no policy", "spec: {workloads: [{name: a, kind: D}]}\n",
       "spec.workloads[0]: missing required field 'policy'"},
      {"no name", "spec: {workloads: [{kind: D, policy: {name: static}}]}\n",
       "spec.workloads[0]: missing required field 'name'"},
      {"signal without source",
       "spec: {workloads: [{name: a, kind: D, policy: {name: static}, signals: [{name: x}]}]}\n",
       "spec.workloads[0].signals[0]: missing required field 'source'"},
      {"no spec", "metadata: {name: x}\n", "missing required field 'spec'"},
      {"signal from an undefined source",
       "spec: {workloads: [{name: a, kind: D, policy: {name: static}, signals: [{name: x, "
       "source: prom}]}]}\n",
       "spec.workloads[0].signals[0].source: no source named 'prom' (defined: none defined"},
      {"hpa signal without a binding",
       "spec: {workloads: [{name: a, kind: D, policy: {name: hpa, metrics: [{signal: q, type: "
       "Pods, target: {type: AverageValue, value: 1}}]}}]}\n",
       "policy hpa reads q but no signal entry binds it"},
      {"unknown engine",
       "spec: {workloads: [{name: a, kind: D, policy: {name: static}, target: {engine: k8z}}]}\n",
       "spec.workloads[0].target.engine: unknown engine 'k8z'"},
      {"unknown source type", "spec: {sources: [{name: p, type: graphite}], workloads: []}\n",
       "spec.sources[0].type: unknown type 'graphite'"},
      // Issue 27 §6: 1 us ran 49,000 ticks a second at 100% CPU.
      {"period below 100 ms", "spec: {period: 1ms, workloads: [{name: a, kind: D}]}\n",
       "spec.period: must be >= 0.1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string all = Errors(c.spec);
    EXPECT_NE(all.find(c.error), std::string::npos) << all;
  }
}

// `store:` as a map: each field reaches StoreOptions; what is left out keeps its default.
TEST(ControllerConfig, StoreMapSetsStoreOptions) {
  struct Case {
    const char* name;
    std::string store;
    int64_t heartbeat_s, retention_s;
    bool sync_every_commit;
    int snapshot_ticks, cache_kib, state_every_ticks;
  };
  const std::vector<Case> cases = {
      {"path only", "{path: /tmp/s.db}", 300, 0, true, 40, 65536, 1},
      {"every field",
       "{path: /tmp/s.db, heartbeat: 1m, retention: 7d, sync: normal, snapshot_ticks: 200, "
       "cache_mib: 16, state_every_ticks: 4}",
       60, 7 * 86400, false, 200, 16384, 4},
      {"every tick stored, SQLite's cache", "{path: /tmp/s.db, heartbeat: 0, cache_mib: 0}", 0, 0,
       true, 40, 0, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errs;
    auto cfg = Parse(kHeader + WithStore(c.store), errs);
    ASSERT_TRUE(cfg.ok()) << errs.ToStatus().message();
    const store::StoreOptions& o = cfg->store_options;
    EXPECT_EQ(cfg->store_path, "/tmp/s.db");
    EXPECT_EQ(o.heartbeat, Seconds(c.heartbeat_s));
    EXPECT_EQ(o.retention, Seconds(c.retention_s));
    EXPECT_EQ(o.sync_every_commit, c.sync_every_commit);
    EXPECT_EQ(o.state_snapshot_ticks, c.snapshot_ticks);
    EXPECT_EQ(o.cache_kib, c.cache_kib);
    EXPECT_EQ(o.state_every_ticks, c.state_every_ticks);
  }
}

TEST(ControllerConfig, StoreMapBadValuesAreErrors) {
  struct Case {
    const char* name;
    std::string store;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"no path", "{heartbeat: 5m}", "spec.store: missing required field 'path'"},
      {"unknown field", "{path: x.db, cache: 64}", "spec.store.cache"},
      {"snapshot every 0 ticks", "{path: x.db, snapshot_ticks: 0}", "spec.store.snapshot_ticks"},
      {"fractional ticks", "{path: x.db, snapshot_ticks: 2.5}", "spec.store.snapshot_ticks"},
      {"cache past 64 GiB", "{path: x.db, cache_mib: 1e9}", "spec.store.cache_mib"},
      {"negative cache", "{path: x.db, cache_mib: -1}", "spec.store.cache_mib"},
      {"state every 0 ticks", "{path: x.db, state_every_ticks: 0}", "spec.store.state_every_ticks"},
      {"state every 1e9 ticks", "{path: x.db, state_every_ticks: 1e9}",
       "spec.store.state_every_ticks"},
      {"sync neither", "{path: x.db, sync: sometimes}", "spec.store.sync"},
      {"retention past ten years", "{path: x.db, retention: 4000d}", "spec.store.retention"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string all = Errors(WithStore(c.store));
    EXPECT_NE(all.find(c.error), std::string::npos) << all;
  }
}

}  // namespace
}  // namespace aiscale::cli
