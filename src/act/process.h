// Process helpers for the local actuator: spawn a command as the leader of its own process
// group, reap it without blocking, stop its whole group (SIGTERM, grace, SIGKILL), and record
// groups in a run directory so a restarted aiscale can kill what a crashed one left behind.
//
// Why fork+exec and not posix_spawn: the child must call prctl(PR_SET_PDEATHSIG) so it never
// outlives aiscale. Note that the death signal follows the *thread* that forked, not the
// process: spawn from a thread that lives as long as the child should (the supervisor).
// Every function is thread-safe (no shared state); errors come back as Status with a code.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "core/time.h"

namespace aiscale::act {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in PATH
  std::string workdir;            // empty: aiscale's own
  std::vector<std::pair<std::string, std::string>> env;  // added to (and over) aiscale's own
  std::string log_path;  // stdout and stderr appended here; empty: /dev/null
};

// The executable `program` names: with a '/', relative to `workdir`; else searched in `path`
// (a PATH value). kNotFound when absent, kPermissionDenied when not executable.
Result<std::string> ResolveExecutable(const std::string& program, const std::string& workdir,
                                      const std::string& path);

// Starts the command as the leader of a new process group (pgid == pid), stdin /dev/null,
// SIGTERM on the death of the calling thread. Fails (and leaves nothing running) when the
// command cannot be executed; the exec error comes back through a close-on-exec pipe.
Result<pid_t> SpawnGroup(const SpawnOptions& options);

// The wait status of `pid` (a child of this process) once it has exited; nullopt while it
// runs. Never blocks.
std::optional<int> TryReap(pid_t pid);
// Like TryReap for a group leader: once it has exited (seen without reaping, so its pgid
// cannot be reused meanwhile), SIGKILLs what is left of its group, then reaps it.
std::optional<int> TryReapGroup(pid_t pid);
// "exited with status 1", "was killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int status);

// Stops the group led by `pid` (a child of this process): SIGTERM to the group, then SIGKILL
// to the group once `grace` has passed with anything of it still alive. Reaps the leader and
// returns its wait status.
int TerminateGroup(pid_t pid, Duration grace, Clock& clock);
// Waits up to `timeout` for the child `pid` to exit; on timeout SIGKILLs its group. Returns
// the wait status, or nullopt when it had to be killed.
std::optional<int> WaitOrKillGroup(pid_t pid, Duration timeout, Clock& clock);

// What /proc/<pid>/stat says about a process.
struct ProcStat {
  char state = '?';          // R, S, D, Z, ...
  pid_t pgid = 0;            // process group
  uint64_t start_ticks = 0;  // start time, clock ticks since boot: tells pid reuse apart
};
std::optional<ProcStat> ReadProcStat(pid_t pid);
// Whether `pid` is gone: no such process, or a zombie (dead, only waiting to be reaped).
bool ProcessGone(pid_t pid);

// One replica's entry in the run directory: "pid pgid start_ticks".
struct RunRecord {
  pid_t pid = 0;
  pid_t pgid = 0;
  uint64_t start_ticks = 0;
};
Status WriteRunRecord(const std::string& path, const RunRecord& record);
Result<RunRecord> ReadRunRecord(const std::string& path);
// Kills, with SIGKILL, what is left of a recorded group: the whole group when its leader is
// the recorded process (same start time); when the leader is gone, each member that started
// no earlier than it (a reused pgid belongs to someone else). Waits up to `wait` for them to
// go. Returns how many processes were signalled.
int KillLeftoverGroup(const RunRecord& record, Duration wait, Clock& clock);

// Whether something on this machine already listens on TCP `port` (bind test on 0.0.0.0 with
// SO_REUSEADDR, so our own sockets in TIME_WAIT do not count).
bool PortInUse(int port);
// Polls PortInUse until the port is free or `wait` has passed: a process just killed, or a
// client's ephemeral socket on that port, may hold it for a moment. Returns whether it is free.
bool WaitPortFree(int port, Duration wait, Clock& clock);

// $TMPDIR/aiscale-<uid> (or /tmp/...): where an engine keeps its pid records when neither the
// config nor the daemon names a run dir.
std::string DefaultRunDir();

}  // namespace aiscale::act
