#include "act/slurm_target.h"

namespace aiscale::act {
namespace {

using config::ConfigNode;

std::vector<std::string> ParseStrings(const ConfigNode& parent, const std::string& key) {
  const ConfigNode node = parent.Child(key);
  std::vector<std::string> out;
  if (!node.IsDefined()) return out;
  if (!node.IsSequence()) {
    node.Error("must be a list of strings");
    return out;
  }
  for (const ConfigNode& item : node.Items()) {
    if (!item.raw().IsScalar() || item.raw().Scalar().empty()) {
      item.Error("must be a non-empty string");
      continue;
    }
    out.push_back(item.raw().Scalar());
  }
  return out;
}

}  // namespace

SlurmTargetConfig SlurmTargetConfig::Parse(const ConfigNode& t) {
  SlurmTargetConfig c;
  if (!t.IsMap()) {
    t.Error("must be a map with engine: slurm and script");
    return c;
  }
  t.CheckKnown({"engine", "script", "partition", "job_name", "base_port", "readiness",
                "grace_period", "pre_stop", "sbatch_args", "slurm_conf", "exclusive",
                "poll_interval", "command_timeout", "run_dir", "rendezvous_host_replica",
                "restart_policy"});
  t.Enum("engine", "slurm", {"slurm"});
  c.script = t.ResolvePath(t.RequiredString("script"));
  c.partition = t.String("partition", "");
  c.job_name = t.String("job_name", "");
  if (c.job_name.find_first_of(" \t\n") != std::string::npos) {
    t.ErrorAt("job_name", "must not contain whitespace");
  }
  c.base_port = t.Int("base_port", 0, config::Between(1, 65535));
  c.readiness = LocalReadiness::Parse(t.Child("readiness"), /*allow_log=*/false);
  c.grace_period = Seconds(t.DurationSeconds("grace_period", 10, config::AtLeast(0)));
  c.pre_stop = LocalPreStop::Parse(t.Child("pre_stop"));
  c.sbatch_args = ParseStrings(t, "sbatch_args");
  c.slurm_conf = t.ResolvePath(t.String("slurm_conf", ""));
  c.exclusive = t.Bool("exclusive", true);
  c.poll_interval = Seconds(t.DurationSeconds("poll_interval", 2, config::Between(0.1, 3600)));
  c.command_timeout = Seconds(t.DurationSeconds("command_timeout", 5, config::Between(0.1, 600)));
  c.run_dir = t.ResolvePath(t.String("run_dir", ""));
  if (t.Has("rendezvous_host_replica")) {
    c.rendezvous_host_replica = t.Int("rendezvous_host_replica", 0, config::Between(0, 10000));
  }
  c.restart_policy = ParseRestartPolicy(t, c.rendezvous_host_replica >= 0);
  if (c.base_port == 0) {
    if (c.readiness.kind == LocalReadiness::Kind::kHttp) {
      t.Child("readiness").ErrorAt("http", "needs base_port (the replica's port)");
    }
    if (c.pre_stop.kind == LocalPreStop::Kind::kHttp) {
      t.Child("pre_stop").ErrorAt("http", "needs base_port (the replica's port)");
    }
  }
  return c;
}

std::string SlurmTargetConfig::Substitute(const std::string& text, const std::string& workload,
                                          int replica, const std::string& host) const {
  const std::pair<std::string, std::string> keys[] = {
      {"{replica}", std::to_string(replica)},
      {"{port}", std::to_string(PortFor(replica))},
      {"{workload}", workload},
      {"{host}", host},
      {"{rdzv_is_host}", IsHost(replica) ? "1" : "0"}};
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    bool hit = false;
    for (const auto& [key, value] : keys) {
      if (text.compare(i, key.size(), key) == 0) {
        out += value;
        i += key.size();
        hit = true;
        break;
      }
    }
    if (!hit) out += text[i++];
  }
  return out;
}

}  // namespace aiscale::act
