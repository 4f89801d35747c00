#include "act/local_target.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aiscale::act {
namespace {

struct Parsed {
  LocalTargetConfig cfg;
  config::ConfigErrors errors;
};

Parsed ParseTarget(const std::string& yaml, const std::string& file = "/etc/aiscale/c.yaml") {
  Parsed p;
  config::ConfigNode root = config::ParseConfig(yaml, file, p.errors);
  p.cfg = LocalTargetConfig::Parse(root.Child("target"));
  return p;
}

std::string AllErrors(const config::ConfigErrors& errs) {
  std::string out;
  for (const auto& e : errs.all()) out += e.ToString() + "\n";
  return out;
}

TEST(LocalTargetConfig, ParseErrorsNameTheirField) {
  struct Case {
    const char* name;
    const char* yaml;
    std::string want;  // substring of one error: "file:line:col: path: message"
  };
  const std::vector<Case> cases = {
      {"missing command", "target:\n  engine: local\n",
       "c.yaml:2:3: target: missing required field 'command'"},
      {"empty command list", "target:\n  command: []\n", "target.command: must not be empty"},
      {"command not a string", "target:\n  command: [python3, {a: 1}]\n",
       "target.command[1]: must be a string"},
      {"port without base_port", "target:\n  command: [srv, --port, '{port}']\n",
       "c.yaml:2:12: target.command: uses {port} but base_port is not set"},
      {"port in env without base_port", "target:\n  command: [srv]\n  env: {PORT: '{port}'}\n",
       "target.env.PORT: uses {port} but base_port is not set"},
      {"http readiness without base_port", "target:\n  command: [srv]\n  readiness: {http: /h}\n",
       "target.readiness.http: needs base_port"},
      {"bad duration", "target:\n  command: [srv]\n  grace_period: soon\n",
       "c.yaml:3:17: target.grace_period: must be a duration like 30s"},
      {"zero ready_timeout", "target:\n  command: [srv]\n  ready_timeout: 0s\n",
       "target.ready_timeout: must be > 0"},
      {"bad backoff duration", "target:\n  command: [srv]\n  restart_backoff: {initial: x}\n",
       "target.restart_backoff.initial: must be a duration"},
      {"backoff max below initial",
       "target:\n  command: [srv]\n  restart_backoff: {initial: 10s, max: 1s}\n",
       "target.restart_backoff.max: must be >= initial"},
      {"unknown field", "target:\n  command: [srv]\n  replicas: 3\n",
       "c.yaml:3:3: target.replicas: unknown field 'replicas'"},
      {"unknown readiness field", "target:\n  command: [srv]\n  readiness: {tcp: 80}\n",
       "target.readiness.tcp: unknown field 'tcp'"},
      {"two readiness kinds",
       "target:\n  command: [srv]\n  base_port: 9000\n  readiness: {http: /h, log: up}\n",
       "target.readiness: must name exactly one of http, log, none"},
      {"pre_stop with both", "target:\n  command: [srv]\n  pre_stop: {http: /s, command: [x]}\n",
       "target.pre_stop: must name exactly one of http, command"},
      {"pre_stop bad timeout",
       "target:\n  command: [srv]\n  base_port: 9000\n  pre_stop: {http: /s, timeout: -1s}\n",
       "target.pre_stop.timeout: must be > 0"},
      {"warm_tier without a port", "target:\n  command: [srv]\n  warm_tier: {}\n",
       "target.warm_tier: needs base_port"},
      {"warm_tier sleep path",
       "target:\n  command: [srv]\n  base_port: 9000\n"
       "  warm_tier: {sleep: 'sleep'}\n",
       "target.warm_tier.sleep: must start with /"},
      {"base_port out of range", "target:\n  command: [srv]\n  base_port: 70000\n",
       "target.base_port: must be <= 65535"},
      {"wrong engine", "target:\n  engine: kubernetes\n  command: [srv]\n",
       "target.engine: must be one of local"},
      {"rdzv_is_host without a host replica",
       "target:\n  command: [run, '--rdzv_conf=is_host={rdzv_is_host}']\n",
       "target.command: uses {rdzv_is_host} but rendezvous_host_replica is not set"},
      {"negative host replica", "target:\n  command: [srv]\n  rendezvous_host_replica: -1\n",
       "target.rendezvous_host_replica: must be >= 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Parsed p = ParseTarget(c.yaml);
    ASSERT_FALSE(p.errors.empty());
    EXPECT_NE(AllErrors(p.errors).find(c.want), std::string::npos) << AllErrors(p.errors);
  }
}

TEST(LocalTargetConfig, ParsesEveryFieldWithDefaults) {
  Parsed p = ParseTarget(
      "target:\n"
      "  engine: local\n"
      "  command: [/usr/bin/python3, server.py, --port, '{port}', --replica, '{replica}']\n"
      "  env: {RANK: '{replica}', URL: 'http://127.0.0.1:{port}/'}\n"
      "  base_port: 18100\n"
      "  readiness: {http: /health}\n"
      "  ready_timeout: 90s\n"
      "  grace_period: 500ms\n"
      "  pre_stop: {http: /prestop, method: PUT, timeout: 5s}\n"
      "  restart_backoff: {initial: 2s, max: 30s}\n"
      "  log_dir: logs\n"
      "  run_dir: /run/aiscale\n");
  ASSERT_TRUE(p.errors.empty()) << AllErrors(p.errors);
  const LocalTargetConfig& c = p.cfg;
  EXPECT_EQ(c.workdir, "/etc/aiscale");  // the config file's directory
  EXPECT_EQ(c.ArgvFor(2), (std::vector<std::string>{"/usr/bin/python3", "server.py", "--port",
                                                    "18102", "--replica", "2"}));
  ASSERT_EQ(c.EnvFor(1).size(), 2u);
  EXPECT_EQ(c.EnvFor(1)[0], (std::pair<std::string, std::string>{"RANK", "1"}));
  EXPECT_EQ(c.EnvFor(1)[1].second, "http://127.0.0.1:18101/");
  EXPECT_EQ(c.readiness.kind, LocalReadiness::Kind::kHttp);
  EXPECT_EQ(c.readiness.http_path, "/health");
  EXPECT_EQ(c.ready_timeout, Seconds(90));
  EXPECT_EQ(c.grace_period, Seconds(0.5));
  EXPECT_EQ(c.pre_stop.kind, LocalPreStop::Kind::kHttp);
  EXPECT_EQ(c.pre_stop.method, "PUT");
  EXPECT_EQ(c.pre_stop.timeout, Seconds(5));
  EXPECT_EQ(c.backoff_initial, Seconds(2));
  EXPECT_EQ(c.backoff_max, Seconds(30));
  EXPECT_EQ(c.log_dir, "/etc/aiscale/logs");
  EXPECT_EQ(c.run_dir, "/run/aiscale");
}

TEST(LocalTargetConfig, StringCommandRunsInTheShellAndDefaultsHold) {
  Parsed p = ParseTarget(
      "target:\n  command: 'sleep 5 # replica {replica}'\n  readiness: {log: ready}\n"
      "  pre_stop: {command: [drain, '{replica}']}\n");
  ASSERT_TRUE(p.errors.empty()) << AllErrors(p.errors);
  EXPECT_EQ(p.cfg.ArgvFor(3),
            (std::vector<std::string>{"/bin/sh", "-c", "exec sleep 5 # replica 3"}));
  EXPECT_EQ(p.cfg.PortFor(3), 0);
  EXPECT_EQ(p.cfg.readiness.kind, LocalReadiness::Kind::kLog);
  EXPECT_EQ(p.cfg.readiness.log_text, "ready");
  EXPECT_EQ(p.cfg.pre_stop.kind, LocalPreStop::Kind::kCommand);
  EXPECT_EQ(p.cfg.pre_stop.command, (std::vector<std::string>{"drain", "{replica}"}));
  EXPECT_EQ(p.cfg.ready_timeout, Seconds(60));
  EXPECT_EQ(p.cfg.grace_period, Seconds(10));
  EXPECT_EQ(p.cfg.backoff_initial, Seconds(1));
  EXPECT_EQ(p.cfg.backoff_max, Seconds(60));
  EXPECT_TRUE(p.cfg.run_dir.empty());  // the caller chooses
}

TEST(LocalTargetConfig, TorchrunModeMarksTheRendezvousHost) {
  Parsed p = ParseTarget(
      "target:\n"
      "  command: [/usr/bin/python3, torchrun.py, '--rdzv_conf=is_host={rdzv_is_host}', t.py]\n"
      "  rendezvous_host_replica: 0\n");
  ASSERT_TRUE(p.errors.empty()) << AllErrors(p.errors);
  EXPECT_EQ(p.cfg.rendezvous_host_replica, 0);
  EXPECT_EQ(p.cfg.ArgvFor(0)[2], "--rdzv_conf=is_host=1");
  EXPECT_EQ(p.cfg.ArgvFor(1)[2], "--rdzv_conf=is_host=0");
  EXPECT_EQ(p.cfg.ArgvFor(2)[2], "--rdzv_conf=is_host=0");
  EXPECT_EQ(ParseTarget("target:\n  command: [srv]\n").cfg.rendezvous_host_replica, -1);
}

// {gpus} is the replica's GPU slot ids, in the command, the env and the pre-stop command; a
// target that uses it anywhere needs a pool of slots (UsesGpus).
TEST(LocalTargetConfig, GpusPlaceholder) {
  struct Case {
    const char* name;
    const char* fields;
    bool uses;
  };
  const std::vector<Case> cases = {
      {"command", "  command: [srv, '--devices={gpus}']\n", true},
      {"env", "  command: [srv]\n  env: {DEVS: 'cuda:{gpus}'}\n", true},
      {"pre-stop", "  command: [srv]\n  pre_stop: {command: [ckpt, '{gpus}']}\n", true},
      {"none", "  command: [srv, '{replica}']\n  env: {A: '{port}'}\n  base_port: 9000\n", false},
  };
  for (const Case& c : cases) {
    Parsed p = ParseTarget(std::string("target:\n") + c.fields);
    ASSERT_TRUE(p.errors.empty()) << c.name << ": " << AllErrors(p.errors);
    EXPECT_EQ(p.cfg.UsesGpus(), c.uses) << c.name;
  }
  Parsed p = ParseTarget(
      "target:\n  command: [srv, '--gpus={gpus}', '{gpus}{replica}']\n  env: {D: '{gpus}'}\n");
  ASSERT_TRUE(p.errors.empty()) << AllErrors(p.errors);
  EXPECT_EQ(p.cfg.ArgvFor(1, "2,3"), (std::vector<std::string>{"srv", "--gpus=2,3", "2,31"}));
  EXPECT_EQ(p.cfg.EnvFor(1, "2,3"),
            (std::vector<std::pair<std::string, std::string>>{{"D", "2,3"}}));
  EXPECT_EQ(p.cfg.ArgvFor(0)[1], "--gpus=");  // outside a pool: empty
}

TEST(LocalTargetConfig, ProgramForNamesWhatStartCanCheck) {
  struct Case {
    const char* name;
    const char* command;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"argv", "[/usr/bin/python3, srv.py]", "/usr/bin/python3"},
      {"substituted argv", "['./srv-{replica}']", "./srv-2"},
      {"plain shell line", "'python3 srv.py --port 1'", "python3"},
      {"leading spaces", "'  ./run.sh; echo done'", "./run.sh"},
      {"assignment first", "'CUDA_VISIBLE_DEVICES=0 python3 srv.py'", ""},
      {"variable first", "'$HOME/bin/srv'", ""},
      {"quoted first", "'\"my server\" --x'", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Parsed p = ParseTarget(std::string("target:\n  command: ") + c.command + "\n");
    ASSERT_TRUE(p.errors.empty()) << AllErrors(p.errors);
    EXPECT_EQ(p.cfg.ProgramFor(2), c.want);
  }
}

TEST(LocalTargetConfig, ReadinessNoneAndNoFileKeepPathsAsGiven) {
  Parsed p =
      ParseTarget("target:\n  command: [srv]\n  readiness: {none: true}\n  workdir: w\n", "");
  ASSERT_TRUE(p.errors.empty()) << AllErrors(p.errors);
  EXPECT_EQ(p.cfg.readiness.kind, LocalReadiness::Kind::kNone);
  EXPECT_EQ(p.cfg.workdir, "w");
}

}  // namespace
}  // namespace aiscale::act
