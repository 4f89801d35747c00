// `aiscale validate` accepts the controller config embedded in deploy/'s ConfigMap (its
// `config.yaml` key), in process (cli::ValidateControllerConfig, what the command runs) and as
// the built binary on the extracted text. Validation is structural and offline: the target's
// `auth: {in_cluster: true}` is checked as a field, and the service account files it names are
// read only when `aiscale run` makes the actuator (they do not exist here, and need not). The
// same text with one field broken must be refused, so the pass above means something.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/controller_config.h"
#include "core/config/config_node.h"
#include "deploy/manifests.h"

namespace aiscale::deploy_test {
namespace {

namespace fs = std::filesystem;

const char* kWhere = "deploy/03-configmap.yaml[config.yaml]";

// The errors of validating `text`, one per line; empty when valid.
std::string ValidationErrors(const std::string& text) {
  config::ConfigErrors errors;
  const config::ConfigNode root = config::ParseConfig(text, kWhere, errors);
  const Status st = errors.empty() ? cli::ValidateControllerConfig(root) : Status::Ok();
  std::string out;
  for (const auto& e : errors.all()) out += e.ToString() + "\n";
  if (!st.ok() && out.empty()) out = st.message();
  return out;
}

// `aiscale validate FILE`'s exit status and output.
int RunValidate(const std::string& text, std::string& output) {
  const fs::path file = fs::path(::testing::TempDir()) /
                        ("aiscale_deploy_config_" + std::to_string(getpid()) + ".yaml");
  std::ofstream(file) << text;
  const std::string cmd = std::string(AISCALE_BINARY) + " validate " + file.string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) output += buf;
  const int status = pclose(p);
  fs::remove(file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Config() { return EmbeddedConfig(LoadManifests()); }

TEST(DeployConfigMap, EmbedsAConfigThatValidates) {
  const std::string text = Config();
  ASSERT_FALSE(text.empty()) << "no ConfigMap with a config.yaml key in deploy/";
  EXPECT_EQ(ValidationErrors(text), "");
  std::string out;
  EXPECT_EQ(RunValidate(text, out), 0) << out;
  EXPECT_NE(out.find(": ok"), std::string::npos) << out;
}

TEST(DeployConfigMap, ValidationRefusesTheConfigWithOneFieldBroken) {
  struct Case {
    const char* name;
    const char* from;
    const char* to;
    const char* want;  // in the error
  };
  const std::vector<Case> cases = {
      {"unknown engine", "engine: kubernetes", "engine: kubernets", "engine"},
      {"in_cluster with a context", "auth: {in_cluster: true}",
       "auth: {in_cluster: true, context: prod}", "in_cluster"},
      {"unknown kind", "kind: Deployment", "kind: Deploymnet", "kind"},
      {"unknown policy", "name: hpa", "name: hpaa", "policy"},
      {"signal from no source", "source: prometheus", "source: prom", "source"},
      {"unknown spec field", "period: 15s", "period: 15s\n  perod: 15s", "perod"},
  };
  const std::string text = Config();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string broken = text;
    const size_t at = broken.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    broken.replace(at, std::string(c.from).size(), c.to);
    const std::string errors = ValidationErrors(broken);
    EXPECT_NE(errors.find(c.want), std::string::npos) << errors;
    std::string out;
    EXPECT_EQ(RunValidate(broken, out), 1) << out;
  }
}

}  // namespace
}  // namespace aiscale::deploy_test
