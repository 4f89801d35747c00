#include "cli/controller_config.h"

#include <gtest/gtest.h>

namespace aiscale::cli {
namespace {

Result<ControllerConfig> Parse(const std::string& text, config::ConfigErrors& errs) {
  auto registry = decide::PolicyRegistry::Default();
  EXPECT_TRUE(registry.ok());
  return ParseControllerConfig(config::ParseConfig(text, "c.yaml", errs), *registry);
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
      policy:
        name: hpa
        metrics: [{signal: queue_len, type: Pods, target: {type: AverageValue, value: 5}}]
      signals:
        - {name: queue_len, source: prometheus, query: 'sum(q)'}
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
  EXPECT_EQ(a.pipeline.constraints->config().max_replicas, 8);
  EXPECT_EQ(a.pipeline.context.control_period_s, 30);
  const auto& b = cfg->workloads[1];
  EXPECT_EQ(b.ref.Key(), "b");
  EXPECT_DOUBLE_EQ(b.staleness_s, 120);
  EXPECT_DOUBLE_EQ(b.pipeline.context.cold_start_s, 90);
  EXPECT_EQ(b.pipeline.policy->Name(), "hpa");
  ASSERT_EQ(b.signals.size(), 1u);
  EXPECT_EQ(b.signals[0].source, "prometheus");
  EXPECT_EQ(b.signals[0].query, "sum(q)");
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
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors errs;
    auto cfg = Parse("apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\n" + c.spec, errs);
    EXPECT_FALSE(cfg.ok());
    const std::string all = errs.ToStatus().message();
    EXPECT_NE(all.find(c.error), std::string::npos) << all;
  }
}

}  // namespace
}  // namespace aiscale::cli
