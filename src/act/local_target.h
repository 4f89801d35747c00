// LocalTargetConfig: the `target:` of a workload run as N local processes (engine: local).
//
// Parsed once at the edge (docs/architecture.md, practice 7): every error is recorded at its field
// path in the ConfigNode's ConfigErrors, unknown fields are rejected, and the caller checks the
// errors before building a LocalActuator from the result. A plain value type; copy freely.
//
//   target: {engine: local, command: ["python3", "srv.py", "--port", "{port}"], base_port: 18100,
//            readiness: {http: /health}, grace_period: 10s}
//   torchrun agents: command: [/usr/bin/python3, torchrun.py, ...,
//   '--rdzv_conf=is_host={rdzv_is_host}',
//            train.py], rendezvous_host_replica: 0, pre_stop: {command: [...checkpoint...]}
//
// In a pool of GPU slots (`pool: {size: N}`, core/gpu_slots.h) {gpus} is the replica's slot ids
// ("0,1", CUDA_VISIBLE_DEVICES style); the actuator also sets CUDA_VISIBLE_DEVICES to them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/config/config_node.h"
#include "core/time.h"

namespace aiscale::act {

// How a replica proves it is ready: an HTTP GET that answers 2xx, a substring in its
// stdout/stderr, or nothing (ready once started).
struct LocalReadiness {
  enum class Kind { kNone, kHttp, kLog };
  Kind kind = Kind::kNone;
  std::string http_path;  // e.g. "/health", probed at http://127.0.0.1:{port}
  std::string log_text;   // substring of the replica's log since its start
  // Reads `readiness: {http: PATH} | {log: TEXT} | {none: true}`; `log` only where the engine
  // sees the replica's output (`allow_log`). Errors are recorded at their fields.
  static LocalReadiness Parse(const config::ConfigNode& node, bool allow_log);
};

// What runs before SIGTERM on a scale-down: an HTTP call to the replica or a command.
// It must succeed or time out before the replica is sent SIGTERM.
struct LocalPreStop {
  enum class Kind { kNone, kHttp, kCommand };
  Kind kind = Kind::kNone;
  std::string http_path;
  std::string method = "POST";
  std::vector<std::string> command;  // argv; {replica} and {port} substituted
  Duration timeout = Seconds(30);
  // Reads `pre_stop: {http: PATH, method} | {command: ARGV or STRING}` with `timeout`.
  static LocalPreStop Parse(const config::ConfigNode& node);
};

// The warm tier (vLLM's sleep mode: a replica started with --enable-sleep-mode and
// VLLM_SERVER_DEV_MODE=1 serves POST /sleep?level=1 and POST /wake_up): how to put a loaded
// replica to sleep and wake it. Off unless `warm_tier:` is given; needs base_port.
struct LocalWarmTier {
  bool on = false;
  std::string sleep_path = "/sleep?level=1";
  std::string wake_path = "/wake_up";
  Duration timeout = Seconds(60);  // a wake reloads weights from host memory: seconds, not ms
  // Reads `warm_tier: {sleep: PATH, wake: PATH, timeout: DURATION}` (all optional).
  static LocalWarmTier Parse(const config::ConfigNode& node);
};

// What a replica's exit with status 0 means. kAlways (a service that stopped): it is started
// again, like after any exit. kOnFailure (a job, as Kubernetes' restartPolicy: OnFailure): the
// job finished, so that replica is not restarted and no replica of the workload is started
// again; once none runs, the workload is completed (ScaleState::completed). torchrun exits 0
// only when every worker finished, so one agent's 0 is the whole job's success. Default:
// kOnFailure in torchrun mode (rendezvous_host_replica set), kAlways otherwise.
enum class RestartPolicy { kAlways, kOnFailure };
// Reads `restart_policy: Always | OnFailure` of a target; `torchrun` picks the default.
RestartPolicy ParseRestartPolicy(const config::ConfigNode& target, bool torchrun);

struct LocalTargetConfig {
  // argv of each replica. A string command becomes {"/bin/sh", "-c", "exec <string>"}: one
  // command line whose program replaces the shell (so signals reach it); for a sequence of
  // commands, use a script.
  std::vector<std::string> command;
  bool shell_command = false;  // `command` was a string, run by /bin/sh
  std::string workdir;         // default: the config file's directory, else the current directory
  std::vector<std::pair<std::string, std::string>> env;  // added to (and over) aiscale's own
  int base_port = 0;  // replica i listens on base_port + i; 0: no ports
  LocalReadiness readiness;
  Duration ready_timeout = Seconds(60);  // not ready by then: killed, restarted, counted a crash
  Duration grace_period = Seconds(10);   // SIGTERM to SIGKILL of the process group
  LocalPreStop pre_stop;
  LocalWarmTier warm_tier;
  Duration backoff_initial = Seconds(1);  // crash loop: initial, doubling up to backoff_max
  Duration backoff_max = Seconds(60);
  std::string log_dir;  // <log_dir>/<workload>-<i>.log; default: run_dir
  std::string run_dir;  // pid records; empty: the caller (or LocalActuator) chooses
  // torchrun mode (docs/training-engine-contract.md): one replica = one torchrun agent of the
  // same elastic job, and this replica hosts the c10d rendezvous store (-1: not torchrun). A
  // scale-down never stops it while another replica runs (every agent would lose the store),
  // and {rdzv_is_host} is "1" on it and "0" on the others, for torchrun's
  // --rdzv_conf=is_host={rdzv_is_host}, so no other agent can take the store by starting first.
  int rendezvous_host_replica = -1;
  RestartPolicy restart_policy = RestartPolicy::kAlways;

  // Reads `target` (a map); errors land in target.errors() at their field paths.
  static LocalTargetConfig Parse(const config::ConfigNode& target);

  // The port of replica i, or 0 when base_port is not set.
  int PortFor(int replica) const { return base_port > 0 ? base_port + replica : 0; }
  // `text` with every {replica}, {port}, {rdzv_is_host} and {gpus} replaced by replica i's
  // values; `gpus` is the replica's GPU slot ids ("0,1"), empty outside a pool of slots.
  std::string Substitute(const std::string& text, int replica, const std::string& gpus = "") const;
  // The argv and the extra environment of replica i, substituted.
  std::vector<std::string> ArgvFor(int replica, const std::string& gpus = "") const;
  std::vector<std::pair<std::string, std::string>> EnvFor(int replica,
                                                          const std::string& gpus = "") const;
  // Whether the command, env or pre-stop command uses {gpus} (it needs a pool of GPU slots).
  bool UsesGpus() const;
  // The program replica i runs, so Start can check it exists: argv[0], or a shell command's
  // first word when it is a plain word (no quotes, variables or assignments); else empty.
  std::string ProgramFor(int replica) const;
};

}  // namespace aiscale::act
