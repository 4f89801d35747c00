#include "cli/controller_config.h"

#include <gtest/gtest.h>

namespace aiscale::cli {
namespace {

Result<ControllerConfig> Parse(const std::string& text, config::ConfigErrors& errs) {
  return ParseControllerConfig(config::ParseConfig(text, "c.yaml", errs));
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
