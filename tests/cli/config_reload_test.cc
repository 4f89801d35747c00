// What a SIGHUP reload may change (cli/config_reload.h): a policy or bounds edit goes through;
// a change to sources, targets, signals, the server address or the set of workloads is named
// as needing a restart. Also the token file rules (cli/api_token.h).
#include "cli/config_reload.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cli/api_token.h"
#include "core/config/config_node.h"

namespace aiscale::cli {
namespace {

constexpr const char* kBase = R"(apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
spec:
  period: 5s
  server: {host: 127.0.0.1, port: 9464, token_file: a.token}
  sources:
    - {name: prom, type: prometheus, url: "http://127.0.0.1:9090"}
  workloads:
    - name: chat
      kind: InferenceService
      min_replicas: 1
      max_replicas: 4
      policy: {name: static, replicas: 2}
      signals: [{name: concurrency, source: prom, query: q}]
      target: {engine: local, command: [/bin/true], base_port: 18100}
)";

config::ConfigNode Parse(const std::string& text, config::ConfigErrors& errs) {
  return config::ParseConfig(text, "test.yaml", errs);
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(RestartDifference, ReloadableEditsPassOthersAreNamed) {
  struct Case {
    const char* name;
    std::string from, to;
    std::string want;  // "" : reloadable
  };
  const std::vector<Case> cases = {
      {"same file", "period: 5s", "period: 5s", ""},
      {"max replicas", "max_replicas: 4", "max_replicas: 6", ""},
      {"policy", "{name: static, replicas: 2}", "{name: static, replicas: 3}", ""},
      {"token file", "token_file: a.token", "token_file: b.token", ""},
      {"period", "period: 5s", "period: 10s", "spec.period"},
      {"server port", "port: 9464", "port: 9465", "spec.server"},
      {"source url", "127.0.0.1:9090", "127.0.0.1:9091", "spec.sources"},
      {"signal query", "query: q", "query: r", "spec.workloads[chat].signals"},
      {"target", "base_port: 18100", "base_port: 18200", "spec.workloads[chat].target"},
      {"renamed workload", "name: chat", "name: talk", "spec.workloads"},
  };
  config::ConfigErrors errs;
  const config::ConfigNode before = Parse(kBase, errs);
  ASSERT_TRUE(errs.empty()) << errs.ToStatus().message();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    config::ConfigErrors e2;
    const config::ConfigNode after = Parse(Replace(kBase, c.from, c.to), e2);
    ASSERT_TRUE(e2.empty());
    const std::string diff = RestartDifference(RestartPartsOf(before), RestartPartsOf(after));
    if (c.want.empty()) {
      EXPECT_EQ(diff, "");
    } else {
      EXPECT_EQ(diff.rfind(c.want, 0), 0u) << diff;
    }
  }
}

// A config whose workloads all come from AIScaler objects has no `workloads:`; `aiscale run`
// read it at start and aborted (yaml-cpp's InvalidNode) before this was fixed.
TEST(RestartPartsOf, ConfigWithoutWorkloadsOrWithOddOnes) {
  const std::string base = kBase;
  const std::string no_workloads =
      base.substr(0, base.find("  workloads:")) + "  aiscalers: {namespaces: [ai]}\n";
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"no workloads key", no_workloads},
      {"workloads a map", no_workloads + "  workloads: {a: 1}\n"},
      {"a workload not a map", no_workloads + "  workloads: [3, {name: [x]}]\n"},
  };
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    config::ConfigErrors errs;
    const config::ConfigNode root = Parse(text, errs);
    RestartParts parts;
    ASSERT_NO_THROW(parts = RestartPartsOf(root));
    EXPECT_EQ(parts.count("spec.aiscalers"), 1u);
    EXPECT_EQ(RestartDifference(parts, RestartPartsOf(Parse(text, errs))), "");
  }
}

TEST(ApiToken, FileRulesNeverShowTheToken) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("aiscale-token-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  auto ok = ReadTokenFile(write("ok", "  abcdefghijklmnop0123\n"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "abcdefghijklmnop0123");
  EXPECT_TRUE(CheckToken(*ok).ok());
  EXPECT_TRUE(ReadTokenFile(write("empty", " \n")).status().IsInvalid());
  EXPECT_TRUE(ReadTokenFile((dir / "absent").string()).status().IsInvalid());
  EXPECT_TRUE(ReadTokenFile(write("big", std::string(5000, 'a'))).status().IsInvalid());
  const Status short_token = CheckToken("hunter2");
  EXPECT_TRUE(short_token.IsInvalid());
  EXPECT_EQ(short_token.message().find("hunter2"), std::string::npos);
  const Status spaced = CheckToken("abcdefgh ijklmnopq");
  EXPECT_TRUE(spaced.IsInvalid());
  EXPECT_EQ(spaced.message().find("abcdefgh"), std::string::npos);
  EXPECT_TRUE(CheckToken("").ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace aiscale::cli
