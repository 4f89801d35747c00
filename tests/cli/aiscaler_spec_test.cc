// AIScaler objects read by the config file's own workload reader: a valid object becomes the
// WorkloadSpec the file would give; every kind of bad input is an error naming its field path
// in the object, never a crash and never a half-read spec; hold annotations; the fingerprint
// that tells a spec change from a status write.
#include "cli/aiscaler_spec.h"

#include <gtest/gtest.h>

#include <functional>

namespace aiscale::cli {
namespace {

using nlohmann::json;

json Object(json spec, json annotations = json::object()) {
  return {{"apiVersion", "aiscale.dev/v1alpha1"},
          {"kind", "AIScaler"},
          {"metadata",
           {{"name", "llm"},
            {"namespace", "serving"},
            {"uid", "u-1"},
            {"resourceVersion", "42"},
            {"generation", 3},
            {"annotations", annotations}}},
          {"spec", spec}};
}

json GoodSpec() {
  return {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "llm"}}},
          {"min_replicas", 2},
          {"max_replicas", 8},
          {"policy",
           {{"name", "hpa"},
            {"metrics",
             {{{"signal", "concurrency"},
               {"type", "Pods"},
               {"target", {{"type", "AverageValue"}, {"value", 16}}}}}}}},
          {"signals", {{{"name", "concurrency"}, {"source", "prom"}, {"query", "sum(x)"}}}}};
}

class AiScalerSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto reg = WorkloadRegistries::Default();
    ASSERT_TRUE(reg.ok());
    reg_ = std::make_unique<WorkloadRegistries>(std::move(reg).value());
    sources_.resize(1);
    sources_[0].name = "prom";
    ctx_.registries = reg_.get();
    ctx_.sources = &sources_;
    ctx_.auth.mode = act::KubeAuthConfig::Mode::kInCluster;
  }
  ParsedAiScaler Parse(const json& object) { return ParseAiScaler(object, ctx_); }

  std::unique_ptr<WorkloadRegistries> reg_;
  std::vector<SourceSpec> sources_;
  AiScalerContext ctx_;
};

TEST_F(AiScalerSpecTest, ValidObjectReadsAsTheFileWould) {
  const ParsedAiScaler p = Parse(Object(GoodSpec()));
  ASSERT_TRUE(p.errors.empty()) << p.errors.front();
  ASSERT_TRUE(p.workload.has_value());
  EXPECT_EQ(p.key, "serving/llm");
  EXPECT_EQ(p.uid, "u-1");
  EXPECT_EQ(p.generation, 3);
  EXPECT_EQ(p.reference, "Deployment/llm");
  EXPECT_EQ(p.workload->ref.Key(), "serving/llm");
  EXPECT_EQ(p.workload->ref.kind, "Deployment") << "kind defaults to scaleTargetRef.kind";
  EXPECT_EQ(p.workload->min_replicas, 2);
  EXPECT_EQ(p.workload->max_replicas, 8);
  EXPECT_EQ(p.workload->pipeline.name, "hpa");
  ASSERT_TRUE(p.workload->target.has_value());
  EXPECT_EQ(p.workload->target->engine, "kubernetes");
  ASSERT_EQ(p.workload->signals.size(), 1u);
  EXPECT_EQ(p.workload->signals[0].query, "sum(x)");
  EXPECT_EQ(p.targets.at("concurrency"), "16");
  EXPECT_FALSE(p.pause.any());
}

TEST_F(AiScalerSpecTest, BadInputNamesItsFieldPath) {
  struct Case {
    const char* name;
    std::function<void(json&)> edit;
    std::string want;  // a piece of one error
  };
  const std::vector<Case> cases = {
      {"wrong type", [](json& s) { s["min_replicas"] = "two"; },
       "spec.min_replicas: must be an integer"},
      {"out of range", [](json& s) { s["max_replicas"] = -1; }, "spec.max_replicas"},
      {"min above max", [](json& s) { s["min_replicas"] = 9; }, "spec"},
      {"unknown policy", [](json& s) { s["policy"]["name"] = "hpx"; },
       "spec.policy.name: unknown policy 'hpx'"},
      {"nested wrong type", [](json& s) { s["policy"]["metrics"][0]["target"]["value"] = "lots"; },
       "spec.policy.metrics[0].target.value"},
      {"unknown field", [](json& s) { s["replicas"] = 3; }, "spec.replicas: unknown field"},
      {"unknown source", [](json& s) { s["signals"][0]["source"] = "nowhere"; },
       "spec.signals[0].source: no source named 'nowhere'"},
      {"unbound signal", [](json& s) { s["signals"] = json::array(); }, "spec.signals"},
      {"no policy", [](json& s) { s.erase("policy"); }, "missing required field 'policy'"},
      {"policy not a map", [](json& s) { s["policy"] = "hpa"; }, "spec.policy: must be a map"},
      {"name in spec", [](json& s) { s["name"] = "x"; }, "spec.name: not allowed"},
      {"target in spec", [](json& s) { s["target"] = json::object(); }, "spec.target: not allowed"},
      {"no scaleTargetRef", [](json& s) { s.erase("scaleTargetRef"); },
       "spec.scaleTargetRef: must be a map"},
      {"scaleTargetRef without name", [](json& s) { s["scaleTargetRef"].erase("name"); },
       "spec.scaleTargetRef: must be a map"},
      {"unknown kind", [](json& s) { s["scaleTargetRef"]["kind"] = "Rollout"; },
       "spec.scaleTargetRef.kind: unknown kind 'Rollout'"},
      {"wrong apiVersion", [](json& s) { s["scaleTargetRef"]["apiVersion"] = "apps/v2"; },
       "spec.scaleTargetRef.apiVersion: a Deployment is apps/v1"},
      {"unknown ref field", [](json& s) { s["scaleTargetRef"]["replicas"] = 1; },
       "spec.scaleTargetRef.replicas: unknown field"},
      {"bad ready_path", [](json& s) { s["scaleTargetRef"]["ready_path"] = ".x"; },
       "spec.scaleTargetRef"},
      {"spec not a map", [](json& s) { s = json::array({1}); }, "spec: must be a map"},
      {"deep nesting",
       [](json& s) {
         json deep = 1;
         for (int i = 0; i < 200; ++i) deep = json::array({deep});
         s["behavior"] = deep;
       },
       "nested deeper"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json spec = GoodSpec();
    c.edit(spec);
    const ParsedAiScaler p = Parse(Object(spec));
    EXPECT_FALSE(p.workload.has_value()) << "never a half-read spec";
    ASSERT_FALSE(p.errors.empty());
    bool found = false;
    std::string all;
    for (const std::string& e : p.errors) {
      found = found || e.find(c.want) != std::string::npos;
      all += e + "\n";
    }
    EXPECT_TRUE(found) << all;
  }
}

TEST_F(AiScalerSpecTest, CustomResourceTargets) {
  json spec = GoodSpec();
  spec["scaleTargetRef"] = {{"apiVersion", "example.com/v1"},
                            {"kind", "InferencePool"},
                            {"name", "pool"},
                            {"resource", "inferencepools"},
                            {"ready_path", "readyReplicas"}};
  const ParsedAiScaler p = Parse(Object(spec));
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  spec["scaleTargetRef"].erase("apiVersion");
  EXPECT_FALSE(Parse(Object(spec)).errors.empty());
}

TEST_F(AiScalerSpecTest, HoldAnnotations) {
  struct Case {
    json annotations;
    std::string summary;
    bool error;
  };
  const std::vector<Case> cases = {
      {json::object(), "", false},
      {{{"aiscale.dev/paused", "true"}}, "paused", false},
      {{{"aiscale.dev/paused-replicas", "4"}}, "pinned at 4", false},
      {{{"aiscale.dev/paused-scale-down", "true"}}, "scale-down paused", false},
      {{{"aiscale.dev/paused", "maybe"}}, "paused", true},  // unreadable: held
      {{{"aiscale.dev/paused-replicas", "-3"}}, "paused", true},
      {{{"other", std::string(1 << 20, 'x')}}, "", false},  // a 1 MB annotation elsewhere
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.annotations.dump().substr(0, 60));
    const ParsedAiScaler p = Parse(Object(GoodSpec(), c.annotations));
    EXPECT_TRUE(p.workload.has_value()) << "a hold does not make the spec invalid";
    EXPECT_EQ(p.pause.Summary(), c.summary);
    EXPECT_EQ(!p.pause_error.empty(), c.error) << p.pause_error;
  }
}

TEST_F(AiScalerSpecTest, FingerprintSeesSpecAndHoldsNotStatusOrVersion) {
  const json a = Object(GoodSpec());
  json status_write = a;
  status_write["metadata"]["resourceVersion"] = "43";
  status_write["status"] = {{"currentReplicas", 2}};
  json resized = a;
  resized["spec"]["max_replicas"] = 9;
  json paused = a;
  paused["metadata"]["annotations"]["aiscale.dev/paused"] = "true";
  json labelled = a;
  labelled["metadata"]["labels"] = {{"team", "x"}};
  json recreated = a;
  recreated["metadata"]["uid"] = "u-2";
  const std::string fp = Parse(a).fingerprint;
  EXPECT_EQ(Parse(status_write).fingerprint, fp);
  EXPECT_EQ(Parse(labelled).fingerprint, fp);
  EXPECT_NE(Parse(resized).fingerprint, fp);
  EXPECT_NE(Parse(paused).fingerprint, fp);
  EXPECT_NE(Parse(recreated).fingerprint, fp);
}

TEST_F(AiScalerSpecTest, ObjectsWithoutNamesOrSpecs) {
  EXPECT_FALSE(Parse(json::object()).errors.empty());
  EXPECT_FALSE(Parse(json::array()).errors.empty());
  json no_ns = Object(GoodSpec());
  no_ns["metadata"].erase("namespace");
  EXPECT_FALSE(Parse(no_ns).errors.empty());
  json no_spec = Object(GoodSpec());
  no_spec.erase("spec");
  EXPECT_NE(Parse(no_spec).errors.at(0).find("spec: must be a map"), std::string::npos);
}

}  // namespace
}  // namespace aiscale::cli
