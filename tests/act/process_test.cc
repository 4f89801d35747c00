// The process helpers under the local actuator, on real processes and files.
#include "act/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "act/readiness.h"
#include "core/system_clock.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/aiscale-process-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (pid_t pid : pids_) {
      EXPECT_TRUE(ProcessGone(pid)) << "pid " << pid << " survived";
      kill(-pid, SIGKILL);
      waitpid(pid, nullptr, WNOHANG);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  pid_t Spawn(std::vector<std::string> argv, std::string log = "") {
    Result<pid_t> pid = SpawnGroup({std::move(argv), dir_, {{"GREETING", "hi"}}, log});
    EXPECT_TRUE(pid.ok()) << pid.status().message();
    if (!pid.ok()) return 0;
    pids_.push_back(*pid);
    return *pid;
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  SystemClock clock_;
  std::string dir_;
  std::vector<pid_t> pids_;
};

TEST_F(ProcessTest, ResolvesExecutables) {
  std::ofstream(dir_ + "/plain.txt") << "x";
  struct Case {
    const char* name;
    std::string program;
    StatusCode code;
    std::string want;  // resolved path, or a substring of the error
  };
  const std::vector<Case> cases = {
      {"absolute", "/bin/sh", StatusCode::kOk, "/bin/sh"},
      {"in PATH", "sh", StatusCode::kOk, "/bin/sh"},
      {"relative to workdir", "./plain.txt", StatusCode::kPermissionDenied, "not an executable"},
      {"missing path", "/no/such/prog", StatusCode::kNotFound, "command /no/such/prog not found"},
      {"missing name", "no-such-prog-xyz", StatusCode::kNotFound, "not found in PATH (/bin)"},
      {"a directory", "/tmp", StatusCode::kPermissionDenied, "not an executable"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::string> r = ResolveExecutable(c.program, dir_, "/bin");
    EXPECT_EQ(r.status().code(), c.code) << r.status().message();
    const std::string got = r.ok() ? *r : r.status().message();
    EXPECT_NE(got.find(c.want), std::string::npos) << got;
  }
}

TEST_F(ProcessTest, SpawnsAGroupLeaderInItsWorkdirWithItsEnvAndLog) {
  const std::string log = dir_ + "/out.log";
  const pid_t pid = Spawn({"/bin/sh", "-c", "echo $GREETING from $(pwd); echo oops >&2"}, log);
  ASSERT_GT(pid, 0);
  std::optional<int> status;
  for (int i = 0; i < 500 && !status; ++i) {
    status = TryReap(pid);
    if (!status) usleep(10000);
  }
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(DescribeWaitStatus(*status), "exited with status 0");
  EXPECT_EQ(Read(log), "hi from " + dir_ + "\noops\n");
}

TEST_F(ProcessTest, ExecFailureComesBackAsAnError) {
  std::ofstream(dir_ + "/script") << "#!/no/such/interpreter\n";
  fs::permissions(dir_ + "/script", fs::perms::owner_all);
  Result<pid_t> r = SpawnGroup({{dir_ + "/script"}, dir_, {}, ""});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound()) << r.status().message();
  EXPECT_NE(r.status().message().find("unable to execute"), std::string::npos);
}

TEST_F(ProcessTest, ReadsProcStatEvenWithAnAwkwardName) {
  // comm holds spaces and a ')': the parser splits at the last one.
  const std::string odd = dir_ + "/a b) c";
  fs::copy_file("/bin/sleep", odd);
  const pid_t pid = Spawn({odd, "30"});
  ASSERT_GT(pid, 0);
  std::optional<ProcStat> s = ReadProcStat(pid);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->pgid, pid);  // its own group
  EXPECT_GT(s->start_ticks, 0u);
  EXPECT_FALSE(ProcessGone(pid));
  EXPECT_EQ(DescribeWaitStatus(TerminateGroup(pid, Seconds(5), clock_)),
            "was killed by signal 15 (Terminated)");
  EXPECT_TRUE(ProcessGone(pid));
  EXPECT_FALSE(ReadProcStat(pid).has_value());
}

TEST_F(ProcessTest, TerminateGroupKillsWhatIgnoresSigtermAndTheChildren) {
  // The shell ignores SIGTERM and so does its background child (inherited SIG_IGN).
  const std::string log = dir_ + "/out.log";
  const pid_t pid = Spawn({"/bin/sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait"}, log);
  ASSERT_GT(pid, 0);
  pid_t child = 0;
  for (int i = 0; i < 500 && child == 0; ++i) {
    const std::string text = Read(log);
    if (!text.empty() && text.back() == '\n') child = std::stoi(text);
    if (child == 0) usleep(10000);
  }
  ASSERT_GT(child, 0);
  EXPECT_EQ(DescribeWaitStatus(TerminateGroup(pid, Seconds(0.3), clock_)),
            "was killed by signal 9 (Killed)");
  for (int i = 0; i < 500 && !ProcessGone(child); ++i) usleep(10000);
  EXPECT_TRUE(ProcessGone(child));
}

TEST_F(ProcessTest, RunRecordsRoundTripAndRejectGarbage) {
  const std::string path = dir_ + "/w-0.pid";
  ASSERT_TRUE(WriteRunRecord(path, {1234, 1234, 987654321}).ok());
  Result<RunRecord> r = ReadRunRecord(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pid, 1234);
  EXPECT_EQ(r->pgid, 1234);
  EXPECT_EQ(r->start_ticks, 987654321u);
  for (const char* garbage : {"", "12", "abc def 1", "1 1 5"}) {
    SCOPED_TRACE(garbage);
    std::ofstream(path) << garbage;
    EXPECT_TRUE(ReadRunRecord(path).status().IsInvalid());
  }
  EXPECT_TRUE(ReadRunRecord(dir_ + "/absent.pid").status().IsNotFound());
  EXPECT_FALSE(WriteRunRecord("/proc/no/such/dir/x.pid", {5, 5, 5}).ok());
}

TEST_F(ProcessTest, LogScanFindsTextAcrossReads) {
  const std::string log = dir_ + "/r.log";
  std::ofstream(log) << "old run: READY\n";
  LogScan scan{FileSize(log), ""};  // a new process's output begins here
  EXPECT_FALSE(ScanLog(log, "READY", scan, 4));
  std::ofstream(log, std::ios::app) << "loading... RE";
  bool found = false;
  for (int i = 0; i < 5; ++i) found = found || ScanLog(log, "READY", scan, 4);
  EXPECT_FALSE(found);
  std::ofstream(log, std::ios::app) << "ADY\n";
  for (int i = 0; i < 5 && !found; ++i) found = ScanLog(log, "READY", scan, 4);
  EXPECT_TRUE(found);
  LogScan none;
  EXPECT_FALSE(ScanLog(dir_ + "/absent.log", "READY", none));
}

}  // namespace
}  // namespace aiscale::act
