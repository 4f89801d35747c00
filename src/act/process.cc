#include "act/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "act/child_env.h"

namespace aiscale::act {
namespace {

constexpr Duration kPollInterval = std::chrono::milliseconds(20);

std::string ErrnoText(int err) { return std::strerror(err); }

bool IsExecutableFile(const std::string& path, int* err) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    *err = errno;
    return false;
  }
  if (!S_ISREG(st.st_mode) || access(path.c_str(), X_OK) != 0) {
    *err = EACCES;
    return false;
  }
  return true;
}

std::string LookupEnv(const std::vector<std::pair<std::string, std::string>>& extra,
                      const std::string& key) {
  for (const auto& [k, v] : extra) {
    if (k == key) return v;
  }
  const char* v = std::getenv(key.c_str());
  return v ? v : "";
}

// What the child reports through the close-on-exec pipe when it cannot exec.
struct ChildFailure {
  int stage = 0;  // 1: chdir, 2: exec, 3: parent gone
  int err = 0;
};

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void ExecChild(const char* path, char* const* argv, char* const* envp,
                            const char* workdir, int log_fd, int null_fd, int report_fd,
                            pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  ChildFailure f;
  if (getppid() != parent) {  // the parent died before prctl took effect
    f.stage = 3;
    (void)!write(report_fd, &f, sizeof f);
    _exit(127);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
  }
  if (workdir[0] != '\0' && chdir(workdir) != 0) {
    f = {1, errno};
    (void)!write(report_fd, &f, sizeof f);
    _exit(127);
  }
  dup2(null_fd, STDIN_FILENO);
  dup2(log_fd, STDOUT_FILENO);
  dup2(log_fd, STDERR_FILENO);
  execve(path, argv, envp);
  f = {2, errno};
  (void)!write(report_fd, &f, sizeof f);
  _exit(127);
}

int OpenLog(const std::string& path) {
  if (path.empty()) return open("/dev/null", O_WRONLY | O_CLOEXEC);
  return open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

// Reads the child's report: nullopt when exec succeeded (EOF on the pipe).
std::optional<ChildFailure> ReadChildReport(int fd) {
  ChildFailure f;
  ssize_t n;
  do {
    n = read(fd, &f, sizeof f);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof f)) return f;
  return std::nullopt;
}

std::string DescribeFailure(const ChildFailure& f, const std::string& path,
                            const std::string& workdir) {
  switch (f.stage) {
    case 1:
      return "unable to enter workdir " + workdir + ": " + ErrnoText(f.err);
    case 3:
      return "parent exited while starting " + path;
    default:
      return "unable to execute " + path + ": " + ErrnoText(f.err);
  }
}

}  // namespace

Result<std::string> ResolveExecutable(const std::string& program, const std::string& workdir,
                                      const std::string& path) {
  if (program.empty()) return Status::Invalid("the command is empty");
  int err = 0;
  if (program.find('/') != std::string::npos) {
    const std::string full =
        program[0] == '/' || workdir.empty() ? program : workdir + "/" + program;
    if (IsExecutableFile(full, &err)) return program;
    if (err == EACCES) return Status::PermissionDenied(full + " is not an executable file");
    return Status::NotFound("command " + full + " not found: " + ErrnoText(err));
  }
  bool denied = false;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string full = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (IsExecutableFile(full, &err)) return full;
    denied = denied || err == EACCES;
  }
  if (denied) return Status::PermissionDenied("command " + program + " in PATH is not executable");
  return Status::NotFound("command " + program + " not found in PATH (" + path + ")");
}

Result<pid_t> SpawnGroup(const SpawnOptions& o) {
  if (o.argv.empty()) return Status::Invalid("the command is empty");
  ASSIGN_OR_RETURN(std::string path,
                   ResolveExecutable(o.argv[0], o.workdir, LookupEnv(o.env, "PATH")));
  // Everything the child touches is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> argv_strings = o.argv;
  std::vector<std::string> env_strings = MergedEnv(o.env);
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<char*> envp = CStrings(env_strings);
  const int log_fd = OpenLog(o.log_path);
  if (log_fd < 0) {
    return Status::PermissionDenied("unable to open log " + o.log_path + ": " + ErrnoText(errno));
  }
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int report[2] = {-1, -1};
  if (null_fd < 0 || pipe2(report, O_CLOEXEC) != 0) {
    const int err = errno;
    close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return Status::Internal("unable to prepare to start " + path + ": " + ErrnoText(err));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    ExecChild(path.c_str(), argv.data(), envp.data(), o.workdir.c_str(), log_fd, null_fd, report[1],
              parent);
  }
  const int fork_err = errno;
  close(report[1]);
  close(log_fd);
  close(null_fd);
  if (pid < 0) {
    close(report[0]);
    return Status::Unavailable("unable to fork for " + path + ": " + ErrnoText(fork_err));
  }
  setpgid(pid, pid);  // also from the parent, so the group exists before we ever signal it
  const std::optional<ChildFailure> failure = ReadChildReport(report[0]);
  close(report[0]);
  if (failure) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string msg = DescribeFailure(*failure, path, o.workdir);
    if (failure->err == ENOENT) return Status::NotFound(msg);
    if (failure->err == EACCES) return Status::PermissionDenied(msg);
    return Status::Internal(msg);
  }
  return pid;
}

std::optional<int> TryReap(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid) return status;
  if (r < 0 && errno == ECHILD) return 0;  // not ours (any more): treat as gone
  return std::nullopt;
}

std::optional<int> TryReapGroup(pid_t pid) {
  siginfo_t info{};
  int r;
  do {
    r = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return errno == ECHILD ? std::optional<int>(0) : std::nullopt;
  if (info.si_pid != pid) return std::nullopt;  // still running
  kill(-pid, SIGKILL);
  return TryReap(pid);
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  return "stopped with wait status " + std::to_string(status);
}

std::optional<int> WaitOrKillGroup(pid_t pid, Duration timeout, Clock& clock) {
  const TimePoint deadline = clock.Now() + timeout;
  for (;;) {
    if (std::optional<int> st = TryReap(pid)) return st;
    if (clock.Now() >= deadline) break;
    clock.SleepUntil(clock.Now() + kPollInterval);
  }
  kill(-pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return std::nullopt;
}

int TerminateGroup(pid_t pid, Duration grace, Clock& clock) {
  kill(-pid, SIGTERM);
  const TimePoint deadline = clock.Now() + grace;
  std::optional<int> status;
  for (;;) {
    if (!status) status = TryReap(pid);
    // Done once the leader is reaped and nothing of its group is left (children included).
    if (status && kill(-pid, 0) != 0 && errno == ESRCH) return *status;
    if (clock.Now() >= deadline) break;
    clock.SleepUntil(clock.Now() + kPollInterval);
  }
  kill(-pid, SIGKILL);
  if (!status) {
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    status = st;
  }
  return *status;
}

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  // "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses: split at the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> f;
  std::string tok;
  while (rest >> tok) f.push_back(tok);
  // f[0] is field 3 (state); field 5 (pgrp) is f[2]; field 22 (starttime) is f[19].
  if (f.size() < 20) return std::nullopt;
  ProcStat s;
  s.state = f[0].empty() ? '?' : f[0][0];
  s.pgid = static_cast<pid_t>(std::strtol(f[2].c_str(), nullptr, 10));
  s.start_ticks = std::strtoull(f[19].c_str(), nullptr, 10);
  return s;
}

bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  const std::optional<ProcStat> s = ReadProcStat(pid);
  return !s || s->state == 'Z' || s->state == 'X';
}

Status WriteRunRecord(const std::string& path, const RunRecord& r) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << r.pid << " " << r.pgid << " " << r.start_ticks << "\n";
    if (!out.flush()) return Status::PermissionDenied("unable to write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::PermissionDenied("unable to write " + path + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

Result<RunRecord> ReadRunRecord(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("unable to read " + path);
  RunRecord r;
  if (!(in >> r.pid >> r.pgid >> r.start_ticks) || r.pid <= 1 || r.pgid <= 1) {
    return Status::Invalid("unable to parse run record " + path);
  }
  return r;
}

int KillLeftoverGroup(const RunRecord& r, Duration wait, Clock& clock) {
  std::vector<pid_t> victims;
  const std::optional<ProcStat> leader = ReadProcStat(r.pid);
  if (leader && leader->state != 'Z') {
    if (leader->start_ticks != r.start_ticks || leader->pgid != r.pgid) return 0;  // pid reused
    victims.push_back(r.pid);
    kill(-r.pgid, SIGKILL);
  }
  if (victims.empty()) {
    // The leader is gone; its children may live on in the group.
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return 0;
    while (dirent* e = readdir(proc)) {
      const pid_t pid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
      if (pid <= 1) continue;
      const std::optional<ProcStat> s = ReadProcStat(pid);
      if (s && s->pgid == r.pgid && s->start_ticks >= r.start_ticks && s->state != 'Z') {
        victims.push_back(pid);
        kill(pid, SIGKILL);
      }
    }
    closedir(proc);
  }
  const TimePoint deadline = clock.Now() + wait;
  for (pid_t pid : victims) {
    while (!ProcessGone(pid) && clock.Now() < deadline) {
      clock.SleepUntil(clock.Now() + kPollInterval);
    }
  }
  return static_cast<int>(victims.size());
}

bool PortInUse(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  const bool in_use =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == EADDRINUSE;
  close(fd);
  return in_use;
}

std::string DefaultRunDir() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp && *tmp ? tmp : "/tmp";
  return base + "/aiscale-" + std::to_string(getuid());
}

bool WaitPortFree(int port, Duration wait, Clock& clock) {
  const TimePoint deadline = clock.Now() + wait;
  while (PortInUse(port)) {
    if (clock.Now() >= deadline) return false;
    clock.SleepUntil(clock.Now() + std::chrono::milliseconds(100));
  }
  return true;
}

}  // namespace aiscale::act
