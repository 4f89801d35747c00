#include "act/slurm_target.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aiscale::act {
namespace {

struct Parsed {
  SlurmTargetConfig cfg;
  config::ConfigErrors errors;
};

Parsed ParseTarget(const std::string& yaml) {
  Parsed p;
  config::ConfigNode root = config::ParseConfig(yaml, "/etc/aiscale/c.yaml", p.errors);
  p.cfg = SlurmTargetConfig::Parse(root.Child("target"));
  return p;
}

std::string AllErrors(const config::ConfigErrors& errs) {
  std::string out;
  for (const auto& e : errs.all()) out += e.ToString() + "\n";
  return out;
}

TEST(SlurmTargetConfig, ParseErrorsNameTheirField) {
  struct Case {
    const char* name;
    const char* yaml;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"missing script", "target:\n  engine: slurm\n",
       "c.yaml:2:3: target: missing required field 'script'"},
      {"wrong engine", "target:\n  engine: local\n  script: s.sh\n", "target.engine"},
      {"http readiness without base_port",
       "target:\n  script: s.sh\n  readiness: {http: /health}\n",
       "target.readiness.http: needs base_port"},
      {"readiness path", "target:\n  script: s.sh\n  base_port: 9000\n  readiness: {http: h}\n",
       "target.readiness.http: must start with /"},
      {"log readiness is local only", "target:\n  script: s.sh\n  readiness: {log: up}\n",
       "target.readiness.log: unknown field 'log'"},
      {"bad grace", "target:\n  script: s.sh\n  grace_period: soon\n",
       "c.yaml:3:17: target.grace_period: must be a duration"},
      {"sbatch_args not a list", "target:\n  script: s.sh\n  sbatch_args: --gres=gpu:1\n",
       "target.sbatch_args: must be a list of strings"},
      {"sbatch_args item", "target:\n  script: s.sh\n  sbatch_args: [--qos=x, {a: 1}]\n",
       "target.sbatch_args[1]: must be a non-empty string"},
      {"pre_stop with both", "target:\n  script: s.sh\n  pre_stop: {http: /d, command: [x]}\n",
       "target.pre_stop: must name exactly one of http, command"},
      {"pre_stop method on command",
       "target:\n  script: s.sh\n  pre_stop: {command: [x], method: GET}\n",
       "target.pre_stop.method: applies only to an http pre_stop"},
      {"base_port range", "target:\n  script: s.sh\n  base_port: 70000\n",
       "target.base_port: must be <= 65535"},
      {"job name with space", "target:\n  script: s.sh\n  job_name: a b\n",
       "target.job_name: must not contain whitespace"},
      {"unknown field", "target:\n  script: s.sh\n  nodes: 3\n",
       "c.yaml:3:3: target.nodes: unknown field 'nodes'"},
      {"not a map", "target: slurm\n", "target: must be a map with engine: slurm and script"},
      {"negative rendezvous host", "target:\n  script: s.sh\n  rendezvous_host_replica: -1\n",
       "target.rendezvous_host_replica: must be"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Parsed p = ParseTarget(c.yaml);
    const std::string all = AllErrors(p.errors);
    EXPECT_NE(all.find(c.want), std::string::npos) << all;
  }
}

TEST(SlurmTargetConfig, DefaultsAndFullConfig) {
  Parsed d = ParseTarget("target: {engine: slurm, script: serve.sbatch}\n");
  ASSERT_TRUE(d.errors.empty()) << AllErrors(d.errors);
  EXPECT_EQ(d.cfg.script, "/etc/aiscale/serve.sbatch");  // relative to the config file
  EXPECT_EQ(d.cfg.partition, "");
  EXPECT_EQ(d.cfg.job_name, "");
  EXPECT_EQ(d.cfg.grace_period, Seconds(10));
  EXPECT_TRUE(d.cfg.exclusive);
  EXPECT_EQ(d.cfg.readiness.kind, LocalReadiness::Kind::kNone);

  Parsed f = ParseTarget(
      "target:\n  engine: slurm\n  script: /opt/s.sh\n  partition: gpu\n  job_name: llm\n"
      "  base_port: 18100\n  readiness: {http: /health}\n  grace_period: 30s\n"
      "  pre_stop: {command: [drain, '{host}:{port}'], timeout: 5s}\n"
      "  sbatch_args: [--gres=gpu:1, --time=60]\n  slurm_conf: conf/slurm.conf\n"
      "  exclusive: false\n  poll_interval: 500ms\n");
  ASSERT_TRUE(f.errors.empty()) << AllErrors(f.errors);
  EXPECT_EQ(f.cfg.script, "/opt/s.sh");
  EXPECT_EQ(f.cfg.partition, "gpu");
  EXPECT_EQ(f.cfg.PortFor(2), 18102);
  EXPECT_EQ(f.cfg.readiness.http_path, "/health");
  EXPECT_EQ(f.cfg.grace_period, Seconds(30));
  EXPECT_EQ(f.cfg.pre_stop.kind, LocalPreStop::Kind::kCommand);
  EXPECT_EQ(f.cfg.pre_stop.timeout, Seconds(5));
  EXPECT_EQ(f.cfg.sbatch_args, (std::vector<std::string>{"--gres=gpu:1", "--time=60"}));
  EXPECT_EQ(f.cfg.slurm_conf, "/etc/aiscale/conf/slurm.conf");
  EXPECT_FALSE(f.cfg.exclusive);
  EXPECT_EQ(f.cfg.poll_interval, Seconds(0.5));
  EXPECT_EQ(f.cfg.Substitute("{workload}-{replica} {host}:{port}", "ns/llm", 2, "node3"),
            "ns/llm-2 node3:18102");
  EXPECT_EQ(f.cfg.rendezvous_host_replica, -1);
}

TEST(SlurmTargetConfig, RendezvousHostFlag) {
  Parsed p = ParseTarget("target: {script: agent.sbatch, rendezvous_host_replica: 0}\n");
  ASSERT_TRUE(p.errors.empty()) << AllErrors(p.errors);
  EXPECT_EQ(p.cfg.rendezvous_host_replica, 0);
  const std::string arg = "--rdzv_conf=is_host={rdzv_is_host}";
  EXPECT_EQ(p.cfg.Substitute(arg, "elastic", 0), "--rdzv_conf=is_host=1");
  EXPECT_EQ(p.cfg.Substitute(arg, "elastic", 1), "--rdzv_conf=is_host=0");
}

}  // namespace
}  // namespace aiscale::act
