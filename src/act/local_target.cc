#include "act/local_target.h"

#include <algorithm>
#include <filesystem>
#include <string_view>

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;
using config::ConfigNode;

bool UsesPort(const std::string& s) { return s.find("{port}") != std::string::npos; }

constexpr std::string_view kIsHost = "{rdzv_is_host}";
constexpr std::string_view kGpus = "{gpus}";

// A command as an argv list, or a string run by the shell (exec, so the shell's pid is the
// replica's). Empty or non-string elements are errors at their index.
std::vector<std::string> ParseCommand(const ConfigNode& parent, const std::string& key) {
  const ConfigNode node = parent.Child(key);
  if (!node.IsDefined()) {
    parent.Error("missing required field '" + key + "'");
    return {};
  }
  if (node.raw().IsScalar()) {
    const std::string s = node.raw().Scalar();
    if (s.empty()) node.Error("must not be empty");
    return s.empty() ? std::vector<std::string>{}
                     : std::vector<std::string>{"/bin/sh", "-c", "exec " + s};
  }
  if (!node.IsSequence()) {
    node.Error("must be a list of strings (argv) or a string run with /bin/sh -c");
    return {};
  }
  std::vector<std::string> argv;
  for (const ConfigNode& item : node.Items()) {
    if (!item.raw().IsScalar()) {
      item.Error("must be a string");
      continue;
    }
    argv.push_back(item.raw().Scalar());
  }
  if (argv.empty()) node.Error("must not be empty");
  if (!argv.empty() && argv[0].empty()) node.Error("the program (first element) is empty");
  return argv;
}

std::string DefaultWorkdir(const ConfigNode& target) {
  const std::string file = target.file();
  if (file.empty()) return "";
  const fs::path dir = fs::path(file).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

}  // namespace

LocalReadiness LocalReadiness::Parse(const ConfigNode& node, bool allow_log) {
  LocalReadiness r;
  if (!node.IsDefined()) return r;
  if (allow_log) {
    node.CheckKnown({"http", "log", "none"});
  } else {
    node.CheckKnown({"http", "none"});
  }
  const int kinds = node.Has("http") + (allow_log && node.Has("log")) + node.Has("none");
  if (kinds != 1) {
    node.Error(allow_log ? "must name exactly one of http, log, none"
                         : "must name exactly one of http, none");
    return r;
  }
  if (node.Has("http")) {
    r.kind = LocalReadiness::Kind::kHttp;
    r.http_path = node.String("http", "/");
    if (r.http_path.empty() || r.http_path[0] != '/') node.ErrorAt("http", "must start with /");
  } else if (allow_log && node.Has("log")) {
    r.kind = LocalReadiness::Kind::kLog;
    r.log_text = node.String("log", "");
    if (r.log_text.empty()) node.ErrorAt("log", "must not be empty");
  } else if (!node.Bool("none", true)) {
    node.ErrorAt("none", allow_log ? "must be true (or name http or log instead)"
                                   : "must be true (or name http instead)");
  }
  return r;
}

LocalPreStop LocalPreStop::Parse(const ConfigNode& node) {
  LocalPreStop p;
  if (!node.IsDefined()) return p;
  node.CheckKnown({"http", "method", "command", "timeout"});
  if (node.Has("http") == node.Has("command")) {
    node.Error("must name exactly one of http, command");
    return p;
  }
  p.timeout = Seconds(node.DurationSeconds("timeout", 30, config::Above(0)));
  if (node.Has("http")) {
    p.kind = LocalPreStop::Kind::kHttp;
    p.http_path = node.String("http", "/");
    if (p.http_path.empty() || p.http_path[0] != '/') node.ErrorAt("http", "must start with /");
    p.method = node.Enum("method", "POST", {"GET", "POST", "PUT", "DELETE"});
  } else {
    if (node.Has("method")) node.ErrorAt("method", "applies only to an http pre_stop");
    p.kind = LocalPreStop::Kind::kCommand;
    p.command = ParseCommand(node, "command");
  }
  return p;
}

LocalWarmTier LocalWarmTier::Parse(const ConfigNode& node) {
  LocalWarmTier w;
  if (!node.IsDefined()) return w;
  node.CheckKnown({"sleep", "wake", "timeout"});
  w.on = true;
  w.sleep_path = node.String("sleep", w.sleep_path);
  w.wake_path = node.String("wake", w.wake_path);
  if (w.sleep_path.empty() || w.sleep_path[0] != '/') node.ErrorAt("sleep", "must start with /");
  if (w.wake_path.empty() || w.wake_path[0] != '/') node.ErrorAt("wake", "must start with /");
  w.timeout = Seconds(node.DurationSeconds("timeout", 60, config::Above(0)));
  return w;
}

namespace {

void ParseEnv(const ConfigNode& node, LocalTargetConfig& c) {
  for (const auto& [key, value] : node.Entries()) {
    if (!value.raw().IsScalar()) {
      value.Error("must be a string");
      continue;
    }
    if (key.empty() || key.find('=') != std::string::npos) value.Error("is not a valid name");
    c.env.emplace_back(key, value.raw().Scalar());
  }
}

// {port} needs base_port: each use is an error at the field that uses it.
void CheckPortUses(const ConfigNode& t, const LocalTargetConfig& c) {
  if (c.base_port > 0) return;
  const std::string why = "uses {port} but base_port is not set";
  for (const std::string& a : c.command) {
    if (UsesPort(a)) {
      t.ErrorAt("command", why);
      break;
    }
  }
  for (const auto& [key, value] : c.env) {
    if (UsesPort(value)) t.Child("env").ErrorAt(key, why);
  }
  for (const std::string& a : c.pre_stop.command) {
    if (UsesPort(a)) {
      t.Child("pre_stop").ErrorAt("command", why);
      break;
    }
  }
  if (c.readiness.kind == LocalReadiness::Kind::kHttp) {
    t.Child("readiness").ErrorAt("http", "needs base_port (the replica's port)");
  }
  if (c.pre_stop.kind == LocalPreStop::Kind::kHttp) {
    t.Child("pre_stop").ErrorAt("http", "needs base_port (the replica's port)");
  }
}

// {rdzv_is_host} without rendezvous_host_replica would make no agent the store's host.
void CheckHostUses(const ConfigNode& t, const LocalTargetConfig& c) {
  if (c.rendezvous_host_replica >= 0) return;
  auto uses = [](const std::vector<std::string>& argv) {
    return std::any_of(argv.begin(), argv.end(),
                       [](const std::string& a) { return a.find(kIsHost) != std::string::npos; });
  };
  if (uses(c.command))
    t.ErrorAt("command", "uses {rdzv_is_host} but rendezvous_host_replica is not set");
}

}  // namespace

RestartPolicy ParseRestartPolicy(const ConfigNode& t, bool torchrun) {
  const std::string fallback = torchrun ? "OnFailure" : "Always";
  return t.Enum("restart_policy", fallback, {"Always", "OnFailure"}) == "OnFailure"
             ? RestartPolicy::kOnFailure
             : RestartPolicy::kAlways;
}

LocalTargetConfig LocalTargetConfig::Parse(const ConfigNode& t) {
  LocalTargetConfig c;
  if (!t.IsMap()) {
    t.Error("must be a map with engine: local and command");
    return c;
  }
  t.CheckKnown({"engine", "command", "workdir", "env", "base_port", "readiness", "ready_timeout",
                "grace_period", "pre_stop", "warm_tier", "restart_backoff", "log_dir", "run_dir",
                "rendezvous_host_replica", "restart_policy"});
  t.Enum("engine", "local", {"local"});
  c.command = ParseCommand(t, "command");
  c.shell_command = t.Child("command").raw().IsScalar();
  c.workdir = t.Has("workdir") ? t.ResolvePath(t.String("workdir", "")) : DefaultWorkdir(t);
  ParseEnv(t.Child("env"), c);
  c.base_port = t.Int("base_port", 0, config::Between(1, 65535));
  c.readiness = LocalReadiness::Parse(t.Child("readiness"), /*allow_log=*/true);
  c.ready_timeout = Seconds(t.DurationSeconds("ready_timeout", 60, config::Above(0)));
  c.grace_period = Seconds(t.DurationSeconds("grace_period", 10, config::AtLeast(0)));
  c.pre_stop = LocalPreStop::Parse(t.Child("pre_stop"));
  c.warm_tier = LocalWarmTier::Parse(t.Child("warm_tier"));
  if (c.warm_tier.on && c.base_port == 0) {
    t.ErrorAt("warm_tier", "needs base_port (sleep and wake are calls to the replica's port)");
  }
  const ConfigNode backoff = t.Child("restart_backoff");
  backoff.CheckKnown({"initial", "max"});
  const double initial = backoff.DurationSeconds("initial", 1, config::Above(0));
  const double max = backoff.DurationSeconds("max", std::max(60.0, initial), config::Above(0));
  if (max < initial) backoff.ErrorAt("max", "must be >= initial");
  c.backoff_initial = Seconds(initial);
  c.backoff_max = Seconds(std::max(max, initial));
  c.log_dir = t.ResolvePath(t.String("log_dir", ""));
  c.run_dir = t.ResolvePath(t.String("run_dir", ""));
  if (t.Has("rendezvous_host_replica")) {
    c.rendezvous_host_replica = t.Int("rendezvous_host_replica", 0, config::Between(0, 10000));
  }
  c.restart_policy = ParseRestartPolicy(t, c.rendezvous_host_replica >= 0);
  CheckPortUses(t, c);
  CheckHostUses(t, c);
  return c;
}

std::string LocalTargetConfig::Substitute(const std::string& text, int replica,
                                          const std::string& gpus) const {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 9, "{replica}") == 0) {
      out += std::to_string(replica);
      i += 9;
    } else if (text.compare(i, 6, "{port}") == 0) {
      out += std::to_string(PortFor(replica));
      i += 6;
    } else if (text.compare(i, kGpus.size(), kGpus) == 0) {
      out += gpus;
      i += kGpus.size();
    } else if (text.compare(i, kIsHost.size(), kIsHost) == 0) {
      out += replica == rendezvous_host_replica ? "1" : "0";
      i += kIsHost.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::vector<std::string> LocalTargetConfig::ArgvFor(int replica, const std::string& gpus) const {
  std::vector<std::string> argv;
  for (const std::string& a : command) argv.push_back(Substitute(a, replica, gpus));
  return argv;
}

std::vector<std::pair<std::string, std::string>> LocalTargetConfig::EnvFor(
    int replica, const std::string& gpus) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : env) out.emplace_back(k, Substitute(v, replica, gpus));
  return out;
}

bool LocalTargetConfig::UsesGpus() const {
  auto uses = [](const std::string& s) { return s.find(kGpus) != std::string::npos; };
  return std::any_of(command.begin(), command.end(), uses) ||
         std::any_of(env.begin(), env.end(), [&](const auto& kv) { return uses(kv.second); }) ||
         std::any_of(pre_stop.command.begin(), pre_stop.command.end(), uses);
}

std::string LocalTargetConfig::ProgramFor(int replica) const {
  const std::vector<std::string> argv = ArgvFor(replica);
  if (argv.empty()) return "";
  if (!shell_command) return argv[0];
  // argv is {"/bin/sh", "-c", "exec <line>"}.
  const std::string line = argv.size() == 3 ? argv[2].substr(5) : "";
  const size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos) return "";
  const std::string word = line.substr(start, line.find_first_of(" \t\n;&|<>", start) - start);
  return word.find_first_of("'\"$`=\\*?[]{}()~#") == std::string::npos ? word : "";
}

}  // namespace aiscale::act
