// The `aiscalers:` map of a ControllerConfig: its fields and defaults, that a config watching
// AIScalers may list no workloads of its own, and each bad value as an error at its path.
#include "cli/controller_config.h"

#include <gtest/gtest.h>

namespace aiscale::cli {
namespace {

constexpr const char* kHeader = "apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\n";

Result<ControllerConfig> Parse(const std::string& spec, std::string& errors) {
  config::ConfigErrors errs;
  auto cfg = ParseControllerConfig(config::ParseConfig(kHeader + spec, "c.yaml", errs));
  errors = errs.ToStatus().ok() ? "" : errs.ToStatus().message();
  return cfg;
}

TEST(AiScalerWatchConfig, FieldsAndDefaults) {
  std::string errors;
  auto cfg = Parse(
      "spec:\n  aiscalers:\n    namespaces: [serving, training]\n"
      "    auth: {kubeconfig: /k, context: prod}\n    timeout: 4s\n"
      "    status: {metrics_interval: 2m, qps: 5}\n",
      errors);
  ASSERT_TRUE(cfg.ok()) << errors;
  const AiScalerWatchConfig& a = cfg->aiscalers;
  EXPECT_TRUE(a.enabled);
  EXPECT_EQ(a.namespaces, (std::vector<std::string>{"serving", "training"}));
  EXPECT_EQ(a.auth.mode, act::KubeAuthConfig::Mode::kKubeconfig);
  EXPECT_EQ(a.auth.context, "prod");
  EXPECT_EQ(a.call_timeout, Seconds(4));
  EXPECT_EQ(a.metrics_interval, Seconds(120));
  EXPECT_DOUBLE_EQ(a.status_qps, 5);
  EXPECT_TRUE(cfg->workloads.empty()) << "no file workloads needed beside AIScalers";

  cfg = Parse("spec:\n  aiscalers: {}\n", errors);
  ASSERT_TRUE(cfg.ok()) << errors;
  EXPECT_TRUE(cfg->aiscalers.namespaces.empty()) << "every namespace";
  EXPECT_EQ(cfg->aiscalers.metrics_interval, Seconds(60));
  EXPECT_DOUBLE_EQ(cfg->aiscalers.status_qps, 20);

  cfg = Parse("spec:\n  workloads: [{name: a, kind: D, policy: {name: static}}]\n", errors);
  ASSERT_TRUE(cfg.ok()) << errors;
  EXPECT_FALSE(cfg->aiscalers.enabled) << "off unless asked for";
}

TEST(AiScalerWatchConfig, BadValuesNameTheirField) {
  struct Case {
    const char* name;
    std::string aiscalers;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"not a map", "aiscalers: [a]", "spec.aiscalers: must be a map"},
      {"unknown field", "aiscalers: {namespace: [a]}", "spec.aiscalers.namespace: unknown field"},
      {"namespace not a label", "aiscalers: {namespaces: [Serving]}",
       "spec.aiscalers.namespaces[0]"},
      {"namespace twice", "aiscalers: {namespaces: [a, a]}", "listed twice"},
      {"namespaces not a list", "aiscalers: {namespaces: a}",
       "spec.aiscalers.namespaces: must be a list"},
      {"bad timeout", "aiscalers: {timeout: 0s}", "spec.aiscalers.timeout"},
      {"bad qps", "aiscalers: {status: {qps: 0}}", "spec.aiscalers.status.qps"},
      {"bad auth", "aiscalers: {auth: {in_cluster: true, context: x}}", "in_cluster"},
      {"off needs workloads", "aiscalers: {enabled: false}", "missing required field 'workloads'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string errors;
    EXPECT_FALSE(Parse("spec:\n  " + c.aiscalers + "\n", errors).ok());
    EXPECT_NE(errors.find(c.want), std::string::npos) << errors;
  }
}

}  // namespace
}  // namespace aiscale::cli
