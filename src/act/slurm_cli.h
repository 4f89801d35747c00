// SlurmCli: the Slurm commands the Slurm actuator runs (squeue, sinfo, sbatch, scancel), behind
// a CommandRunner seam so tests drive the actuator with a fake cluster.
//
// Why commands and not slurmrestd: every Slurm site has the client commands; few run the REST
// daemon. Each call has a deadline (a down slurmctld makes squeue retry for ~10 s), and every
// failure comes back as a Status: kUnavailable when Slurm cannot answer (controller down, the
// command timed out), kInvalid when its output cannot be read, kNotFound when a command is
// missing. Thread-safe: no state beyond the immutable options and the runner.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "act/slurm_parse.h"
#include "core/result.h"
#include "core/time.h"

namespace aiscale::act {

struct CommandOutput {
  int exit_code = 0;  // -1: killed by a signal (a timeout included)
  std::string out;
  std::string err;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv (argv[0] looked up in PATH) with `env` added to aiscale's environment, stdin
  // /dev/null. kDeadlineExceeded after `timeout` (the process is killed); kNotFound when it
  // cannot be executed. A non-zero exit is an output, not an error.
  virtual Result<CommandOutput> Run(const std::vector<std::string>& argv,
                                    const std::vector<std::pair<std::string, std::string>>& env,
                                    Duration timeout) = 0;
};

// The real runner: fork/exec with pipes, killed (its process group) at the deadline.
class SubprocessRunner final : public CommandRunner {
 public:
  Result<CommandOutput> Run(const std::vector<std::string>& argv,
                            const std::vector<std::pair<std::string, std::string>>& env,
                            Duration timeout) override;
};

struct SlurmCliOptions {
  std::string slurm_conf;  // SLURM_CONF for every command; empty: aiscale's own environment
  Duration timeout = Seconds(5);
  bool json = true;  // false: use the text formats (a Slurm built without JSON support)
};

class SlurmCli {
 public:
  SlurmCli(CommandRunner& runner, SlurmCliOptions options)
      : runner_(runner), options_(std::move(options)) {}

  // Every job the controller knows (squeue --json; when that output is not JSON, the text
  // format of the active jobs). kUnavailable when the controller does not answer.
  Result<std::vector<SlurmJob>> Jobs();
  // The nodes of `partition` (all when empty).
  Result<std::vector<SlurmNode>> Nodes(const std::string& partition);
  // sbatch --parsable ARGS SCRIPT; the new job's id.
  Result<std::string> Submit(const std::vector<std::string>& args, const std::string& script);
  // scancel --full --signal=SIGNAL ID (the batch script and every step), or scancel ID when
  // `signal` is empty. A job already gone is not an error.
  Status Cancel(const std::string& id, const std::string& signal);

 private:
  Result<CommandOutput> Run(std::vector<std::string> argv);
  // Unavailable when the command failed: its stderr's last line as the message.
  static Status Failed(const std::string& what, const CommandOutput& out);

  CommandRunner& runner_;
  const SlurmCliOptions options_;
};

}  // namespace aiscale::act
