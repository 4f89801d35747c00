// deploy/06-aiscaler-crd.yaml is what `aiscale crd` generates from the workload readers, so the
// schema the API server enforces and the reader aiscale runs cannot drift; and the two agree
// in practice: the example AIScaler passes both, and each wrong type, unknown value and out of
// range number the schema refuses is refused by the reader too, at the same field. Also: a
// structural schema (every node typed), printer columns as `kubectl get hpa`'s, a status
// subresource and a short name.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "cli/aiscaler_crd.h"
#include "cli/aiscaler_spec.h"
#include "deploy/manifests.h"
#include "fakes/openapi_validator.h"
#include "fakes/yaml_json.h"

namespace aiscale::deploy_test {
namespace {

using nlohmann::json;

const char* kCrdFile = "06-aiscaler-crd.yaml";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json DeployedCrd() { return testing::YamlToJson(YAML::LoadFile(DeployDir() + "/" + kCrdFile)); }

const json& VersionOf(const json& crd) { return crd["spec"]["versions"][0]; }

TEST(DeployCrd, IsWhatTheReadersGenerate) {
  Result<json> crd = cli::AiScalerCrd();
  ASSERT_TRUE(crd.ok()) << crd.status().message();
  const std::string generated = cli::ToYaml(*crd, cli::kCrdHeader);
  EXPECT_EQ(ReadText(DeployDir() + "/" + kCrdFile), generated)
      << "deploy/" << kCrdFile << " differs from the readers' schema; regenerate it with\n"
      << "  ./build/aiscale crd > deploy/" << kCrdFile;
  // And the YAML says what the JSON says (the emitter quotes what must be quoted).
  EXPECT_EQ(testing::YamlToJson(YAML::Load(generated)), *crd);
}

// Every node of a structural schema has a type, or is int-or-string, or keeps unknown fields.
void CheckStructural(const json& s, const std::string& path, std::vector<std::string>& out) {
  if (!s.contains("type") && !s.value("x-kubernetes-int-or-string", false) &&
      !s.value("x-kubernetes-preserve-unknown-fields", false)) {
    out.push_back(path);
  }
  const json properties = s.value("properties", json::object());
  for (const auto& [k, child] : properties.items()) {
    CheckStructural(child, path + "." + k, out);
  }
  if (s.contains("items")) CheckStructural(s["items"], path + "[]", out);
}

TEST(DeployCrd, IsStructuralWithStatusColumnsAndShortName) {
  const json crd = DeployedCrd();
  EXPECT_EQ(crd["metadata"]["name"], "aiscalers.aiscale.dev");
  EXPECT_EQ(crd["spec"]["scope"], "Namespaced");
  EXPECT_EQ(crd["spec"]["names"]["shortNames"], json::array({"ais"}));
  const json& v = VersionOf(crd);
  EXPECT_EQ(v["name"], "v1alpha1");
  EXPECT_TRUE(v["subresources"].contains("status"));
  std::vector<std::string> untyped;
  CheckStructural(v["schema"]["openAPIV3Schema"], "", untyped);
  for (const std::string& p : untyped) ADD_FAILURE() << "no type at " << p;
  std::vector<std::string> columns;
  for (const json& c : v["additionalPrinterColumns"])
    columns.push_back(c["name"].get<std::string>());
  EXPECT_EQ(columns,
            (std::vector<std::string>{"Reference", "Targets", "Min", "Max", "Replicas", "Age"}));
  const json& spec = v["schema"]["openAPIV3Schema"]["properties"]["spec"];
  EXPECT_EQ(spec["required"], json::array({"scaleTargetRef", "policy"}));
  for (const char* gone : {"name", "namespace", "target"}) {
    EXPECT_FALSE(spec["properties"].contains(gone)) << gone;
  }
}

class DeployCrdAgreement : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_ = VersionOf(DeployedCrd())["schema"]["openAPIV3Schema"];
    reg_ = std::make_unique<cli::WorkloadRegistries>(cli::WorkloadRegistries::Default().value());
    sources_.resize(1);
    sources_[0].name = "prometheus";
    ctx_.registries = reg_.get();
    ctx_.sources = &sources_;
    example_ = testing::YamlToJson(YAML::LoadFile(DeployDir() + "/examples/aiscaler.yaml"));
    example_["metadata"]["uid"] = "u-1";
  }
  std::vector<std::string> SchemaErrors(const json& object) {
    json body = object;
    body.erase("metadata");
    return testing::ValidateOpenApi(schema_, body, "");
  }

  json schema_;
  std::unique_ptr<cli::WorkloadRegistries> reg_;
  std::vector<SourceSpec> sources_;
  cli::AiScalerContext ctx_;
  json example_;
};

TEST_F(DeployCrdAgreement, TheExamplePassesBoth) {
  const std::vector<std::string> errors = SchemaErrors(example_);
  EXPECT_TRUE(errors.empty()) << errors.front();
  const cli::ParsedAiScaler p = cli::ParseAiScaler(example_, ctx_);
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_TRUE(p.workload.has_value());
}

TEST_F(DeployCrdAgreement, WhatTheSchemaRefusesTheReaderRefusesAtTheSameField) {
  struct Case {
    const char* name;
    std::function<void(json&)> edit;
    const char* field;  // in both messages
  };
  const std::vector<Case> cases = {
      {"integer as text", [](json& s) { s["min_replicas"] = "two"; }, "spec.min_replicas"},
      {"negative bound", [](json& s) { s["max_replicas"] = -1; }, "spec.max_replicas"},
      {"unknown policy", [](json& s) { s["policy"]["name"] = "hpx"; }, "spec.policy.name"},
      {"unknown metric type", [](json& s) { s["policy"]["metrics"][0]["type"] = "Podz"; },
       "spec.policy.metrics[0].type"},
      {"target as text", [](json& s) { s["policy"]["metrics"][0]["target"]["value"] = "x"; },
       "spec.policy.metrics[0].target.value"},
      {"list as map",
       [](json& s) {
         s["signals"] = json{{"a", 1}};
       },
       "spec.signals"},
      {"boolean as text", [](json& s) { s["scale_to_zero"] = "maybe"; }, "spec.scale_to_zero"},
      {"duration as list", [](json& s) { s["cold_start"] = json::array({1}); }, "spec.cold_start"},
      {"window over its bound",
       [](json& s) { s["behavior"]["scaleDown"]["stabilizationWindowSeconds"] = 99999; },
       "spec.behavior.scaleDown.stabilizationWindowSeconds"},
      {"no policy", [](json& s) { s.erase("policy"); }, "policy"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json object = example_;
    c.edit(object["spec"]);
    std::string schema_all, reader_all;
    for (const std::string& e : SchemaErrors(object)) schema_all += e + "\n";
    for (const std::string& e : cli::ParseAiScaler(object, ctx_).errors) reader_all += e + "\n";
    EXPECT_NE(schema_all.find(c.field), std::string::npos) << "the schema lets it pass:\n"
                                                           << schema_all;
    EXPECT_NE(reader_all.find(c.field), std::string::npos) << "the reader lets it pass:\n"
                                                           << reader_all;
  }
}

}  // namespace
}  // namespace aiscale::deploy_test
