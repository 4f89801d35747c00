#include "act/slurm_cli.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "act/child_env.h"

namespace aiscale::act {
namespace {

// Reads both pipes until they close or the deadline passes; false on timeout.
bool Drain(int out_fd, int err_fd, std::chrono::steady_clock::time_point deadline,
           CommandOutput& result) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open = 2;
  char buf[8192];
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int n = poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open;
      }
    }
  }
  return true;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// What a failed Slurm command said: its "<prog>: error: " lines when there are any (sbatch
// spreads one message over several, e.g. "This does not look like a batch script.  The first /
// line must start with #! ...": the last line alone says nothing), else its last line; joined,
// the repeated prefix dropped after the first, at most 400 bytes.
std::string ErrorText(const std::string& text) {
  std::string joined;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t at = line.find(": error: ");
    if (at == std::string::npos) continue;
    if (!joined.empty()) line = line.substr(at + 9);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    joined += (joined.empty() ? "" : " ") + line;
  }
  if (joined.empty()) joined = LastLine(text);
  if (joined.size() > 400) joined = joined.substr(0, 400) + "...";
  return joined;
}

}  // namespace

Result<CommandOutput> SubprocessRunner::Run(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env, Duration timeout) {
  if (argv.empty()) return Status::Invalid("empty command");
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnv(env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(envs);
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0)
    return Status::Internal("pipe: " + std::string(strerror(errno)));
  if (pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    return Status::Internal("pipe: " + std::string(strerror(errno)));
  }
  const pid_t pid = fork();
  if (pid < 0) return Status::Internal("fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execvpe(c_args[0], c_args.data(), c_env.data());
    const int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  const bool exec_failed = read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close(exec_pipe[0]);
  CommandOutput result;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
  const bool finished = exec_failed || Drain(out_pipe[0], err_pipe[0], deadline, result);
  close(out_pipe[0]);
  close(err_pipe[0]);
  if (!finished) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exec_failed) {
    return Status::NotFound("unable to run " + argv[0] + ": " + strerror(exec_errno));
  }
  if (!finished) {
    return Status::DeadlineExceeded(argv[0] + " did not finish within " +
                                    std::to_string(ToSeconds(timeout)).substr(0, 4) + " s");
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

Result<CommandOutput> SlurmCli::Run(std::vector<std::string> argv) {
  std::vector<std::pair<std::string, std::string>> env;
  if (!options_.slurm_conf.empty()) env.emplace_back("SLURM_CONF", options_.slurm_conf);
  Result<CommandOutput> r = runner_.Run(argv, env, options_.timeout);
  if (!r.ok() && r.status().IsDeadlineExceeded()) {
    // A controller that does not answer makes every command hang in retries: Slurm is
    // unavailable, not this call too slow.
    return Status::Unavailable(r.status().message() + " (is slurmctld running?)");
  }
  return r;
}

Status SlurmCli::Failed(const std::string& what, const CommandOutput& out) {
  std::string why = ErrorText(out.err);
  if (why.empty()) why = ErrorText(out.out);
  if (why.empty()) why = "exit status " + std::to_string(out.exit_code);
  return Status::Unavailable(what + " failed: " + why);
}

Result<std::vector<SlurmJob>> SlurmCli::Jobs() {
  if (options_.json) {
    ASSIGN_OR_RETURN(CommandOutput out, Run({"squeue", "--json"}));
    Result<std::vector<SlurmJob>> jobs = ParseSqueueJson(out.out);
    // Not JSON at all (no --json in this build): fall back to text below.
    if (jobs.ok() || jobs.status().IsUnavailable()) return jobs;
    if (out.exit_code == 0 && !out.out.empty() && out.out[0] == '{') return jobs;
  }
  ASSIGN_OR_RETURN(
      CommandOutput out,
      Run({"squeue", "-h", "-t", "PENDING,CONFIGURING,RUNNING,REQUEUED,RESIZING,COMPLETED", "-o",
           "%i|%T|%N|%j|%k"}));
  if (out.exit_code != 0) return Failed("squeue", out);
  return ParseSqueueText(out.out);
}

Result<std::vector<SlurmNode>> SlurmCli::Nodes(const std::string& partition) {
  std::vector<std::string> part;
  if (!partition.empty()) part = {"-p", partition};
  if (options_.json) {
    std::vector<std::string> argv = {"sinfo", "--json"};
    argv.insert(argv.end(), part.begin(), part.end());
    ASSIGN_OR_RETURN(CommandOutput out, Run(argv));
    Result<std::vector<SlurmNode>> nodes = ParseSinfoJson(out.out);
    if (nodes.ok() || nodes.status().IsUnavailable()) return nodes;
    if (out.exit_code == 0 && !out.out.empty() && out.out[0] == '{') return nodes;
  }
  std::vector<std::string> argv = {"sinfo", "-h", "-N", "-o", "%N|%o|%T|%P|%G"};
  argv.insert(argv.end(), part.begin(), part.end());
  ASSIGN_OR_RETURN(CommandOutput out, Run(argv));
  if (out.exit_code != 0) return Failed("sinfo", out);
  return ParseSinfoText(out.out);
}

Result<std::string> SlurmCli::Submit(const std::vector<std::string>& args,
                                     const std::string& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(script);
  ASSIGN_OR_RETURN(CommandOutput out, Run(argv));
  if (out.exit_code != 0) return Failed("sbatch", out);
  // --parsable prints "<id>" or "<id>;<cluster>".
  std::string id = LastLine(out.out);
  id = id.substr(0, id.find(';'));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Invalid("sbatch printed no job id: '" + LastLine(out.out) + "'");
  }
  return id;
}

Status SlurmCli::Cancel(const std::string& id, const std::string& signal) {
  std::vector<std::string> argv = {"scancel"};
  if (!signal.empty()) argv.insert(argv.end(), {"--full", "--signal=" + signal});
  argv.push_back(id);
  ASSIGN_OR_RETURN(CommandOutput out, Run(argv));
  if (out.exit_code == 0) return Status::Ok();
  // "scancel: error: Kill job error on job id 42: Job/step already completing or completed"
  // and "Invalid job id specified": the job is gone, which is what was asked.
  if (out.err.find("already completing or completed") != std::string::npos ||
      out.err.find("Invalid job id") != std::string::npos) {
    return Status::Ok();
  }
  return Failed("scancel", out);
}

}  // namespace aiscale::act
