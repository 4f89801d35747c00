// LocalActuator against real processes: tests/act/testdata/replica.py (a tiny HTTP server that
// records what happens to it) and /bin/sh. Every test polls for outcomes with generous
// timeouts, and TearDown shuts the actuator down and checks, by pid, that nothing it started
// (children of replicas included) is still alive.
#include "act/local_actuator.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "act/process.h"
#include "core/curl_http_client.h"
#include "core/system_clock.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;

const std::string kTestdata = std::string(AISCALE_SOURCE_DIR) + "/tests/act/testdata";
const std::string kReplica = kTestdata + "/replica.py";
constexpr Duration kPatience = Seconds(20);

// A listening socket on 127.0.0.1; closed on destruction.
class Listener {
 public:
  explicit Listener(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && listen(fd_, 4) == 0;
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { close(fd_); }
  bool ok() const { return ok_; }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  bool ok_ = false;
};

// `n` consecutive free ports: the kernel picks the first (bind to port 0), the rest are checked.
int FreePorts(int n) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    int base = 0;
    {
      Listener probe(0);
      base = probe.port();
    }
    bool all_free = base + n <= 65535;
    for (int i = 0; i < n && all_free; ++i) all_free = !PortInUse(base + i);
    if (all_free) return base;
  }
  return 0;
}

class LocalActuatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/aiscale-local-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    port_ = FreePorts(4);
    ASSERT_GT(port_, 0);
  }

  void TearDown() override {
    if (actuator_) {
      for (pid_t pid : actuator_->Pids()) pids_.insert(pid);
      actuator_->Shutdown();
      EXPECT_TRUE(actuator_->Pids().empty());
    }
    for (pid_t pid : RecordedPids()) pids_.insert(pid);
    for (pid_t pid : pids_) {
      EXPECT_TRUE(ProcessGone(pid)) << "pid " << pid << " survived";
      if (!ProcessGone(pid)) kill(-pid, SIGKILL), kill(pid, SIGKILL);  // never leak
    }
    actuator_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // The target YAML with {dir}, {base} (port_) and {script} filled in.
  LocalTargetConfig Config(std::string yaml) {
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"$DIR", dir_},
                                                          {"$BASE", std::to_string(port_)},
                                                          {"$SCRIPT", kReplica},
                                                          {"$TESTDATA", kTestdata}}) {
      for (size_t at; (at = yaml.find(from)) != std::string::npos;)
        yaml.replace(at, from.size(), to);
    }
    config::ConfigErrors errs;
    config::ConfigNode root = config::ParseConfig("target:\n" + yaml, dir_ + "/c.yaml", errs);
    LocalTargetConfig cfg = LocalTargetConfig::Parse(root.Child("target"));
    EXPECT_TRUE(errs.empty()) << errs.ToStatus().message();
    cfg.run_dir = dir_ + "/run";
    return cfg;
  }

  Status StartWith(LocalTargetConfig cfg, int initial) {
    actuator_ = std::make_unique<LocalActuator>(ref_, std::move(cfg), clock_, http_, initial);
    return actuator_->Start();
  }

  bool WaitFor(const std::function<bool()>& done, Duration timeout = kPatience) {
    const TimePoint deadline = clock_.Now() + timeout;
    while (clock_.Now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  }

  // The project's model server with vLLM's sleep mode, waking in `wake_s`, under `warm_tier`.
  static std::string SleepingModelServers(const std::string& wake_s, const std::string& tier) {
    const std::string server =
        std::string(AISCALE_SOURCE_DIR) + "/tests/integration/tools/model_server.py";
    return "  command: [/usr/bin/python3, " + server +
           ", --port, '{port}', --replica, '{replica}', --ready-after, '0.2',"
           " --enable-sleep-mode, --wake-s, '" +
           wake_s +
           "']\n"
           "  base_port: $BASE\n"
           "  readiness: {http: /health}\n"
           "  warm_tier: " +
           tier + "\n";
  }
  ScaleState Observe() { return actuator_->Observe(ref_).value(); }
  bool ReadyIs(int current, int ready) {
    const ScaleState s = Observe();
    return s.current == current && s.ready == ready;
  }

  // Lines of the events file of replica i ("start <pid>", "prestop", "sigterm", ...).
  std::vector<std::string> Events(int replica) const {
    std::ifstream in(dir_ + "/events-" + std::to_string(replica));
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  int Count(const std::vector<std::string>& events, const std::string& prefix) const {
    int n = 0;
    for (const std::string& e : events) n += e.rfind(prefix, 0) == 0;
    return n;
  }
  // Every pid a script recorded ("start <pid>", "child <pid>", "prestop <pid>").
  std::vector<pid_t> RecordedPids() const {
    std::vector<pid_t> out;
    for (int i = 0; i < 4; ++i) {
      for (const std::string& e : Events(i)) {
        std::istringstream in(e);
        std::string word;
        pid_t pid = 0;
        if (in >> word >> pid && pid > 1) out.push_back(pid);
      }
    }
    return out;
  }

  SystemClock clock_;
  CurlHttpClient http_;
  WorkloadRef ref_{"InferenceService", "", "llm"};
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<LocalActuator> actuator_;
  std::set<pid_t> pids_;
};

const char* kHttpServer =
    "  command: [/usr/bin/python3, $SCRIPT, --port, '{port}', --health-delay, '0.3',"
    " --events, '$DIR/events-{replica}']\n"
    "  base_port: $BASE\n"
    "  readiness: {http: /health}\n"
    "  grace_period: 5s\n";

TEST_F(LocalActuatorTest, ScalesZeroToThreeToOneToZeroWithHttpReadiness) {
  ASSERT_TRUE(StartWith(Config(kHttpServer), 0).ok());
  EXPECT_TRUE(ReadyIs(0, 0));
  ASSERT_TRUE(actuator_->Apply(ref_, 3).ok());
  EXPECT_EQ(Observe().current, 3);  // desired at once, ready later
  ASSERT_TRUE(WaitFor([&] { return ReadyIs(3, 3); })) << Observe().detail;
  for (pid_t pid : actuator_->Pids()) pids_.insert(pid);
  auto eps = actuator_->Endpoints(ref_);
  ASSERT_TRUE(eps.ok());
  ASSERT_EQ(eps->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*eps)[i].instance, "llm-" + std::to_string(i));
    EXPECT_EQ((*eps)[i].host, "127.0.0.1");
    EXPECT_EQ((*eps)[i].port, port_ + i);
    EXPECT_TRUE((*eps)[i].ready);
  }

  ASSERT_TRUE(actuator_->Apply(ref_, 1).ok());
  ASSERT_TRUE(WaitFor([&] { return actuator_->Pids().size() == 1u && ReadyIs(1, 1); }));
  eps = actuator_->Endpoints(ref_);
  ASSERT_EQ(eps->size(), 1u);
  EXPECT_EQ((*eps)[0].instance, "llm-0");  // the newest replicas went first
  EXPECT_EQ(Count(Events(2), "sigterm"), 1);
  EXPECT_EQ(Count(Events(0), "sigterm"), 0);

  ASSERT_TRUE(actuator_->Apply(ref_, 0).ok());
  ASSERT_TRUE(WaitFor([&] { return actuator_->Pids().empty(); }));
  EXPECT_TRUE(ReadyIs(0, 0));
  for (pid_t pid : pids_) EXPECT_TRUE(ProcessGone(pid)) << pid;
}

// The warm tier: replicas ranked past the awake count are loaded, then put to sleep (POST
// /sleep?level=1 to the replica); a scale-up wakes a sleeper instead of starting a cold one;
// a scale-down of the awake count puts one to sleep and stops the surplus sleeper.
TEST_F(LocalActuatorTest, WarmTierSleepsWakesAndStopsTheSurplus) {
  ASSERT_TRUE(StartWith(Config(std::string(kHttpServer) + "  warm_tier: {}\n"), 0).ok());
  ASSERT_TRUE(actuator_->ApplyTiers(ref_, 2, 1).ok());
  const ScaleState first = Observe();
  EXPECT_EQ(first.asleep, 1) << "the tier as spec'd, at once (the Controller compares it)";
  EXPECT_EQ(first.asleep_ready, 0) << "nothing is asleep before it has loaded";
  ASSERT_TRUE(WaitFor([&] {
    const ScaleState s = Observe();
    return s.current == 2 && s.ready == 2 && s.asleep == 1 && s.asleep_ready == 1;
  })) << Observe().detail;
  EXPECT_EQ(Count(Events(2), "sleep"), 1);
  EXPECT_EQ(Count(Events(0), "sleep") + Count(Events(1), "sleep"), 0);
  auto eps = actuator_->Endpoints(ref_);
  ASSERT_TRUE(eps.ok());
  EXPECT_EQ(eps->size(), 2u) << "an asleep replica takes no requests";

  ASSERT_TRUE(actuator_->ApplyTiers(ref_, 3, 0).ok());
  ASSERT_TRUE(WaitFor([&] {
    return ReadyIs(3, 3) && Observe().asleep == 0 && Observe().asleep_ready == 0;
  })) << Observe().detail;
  EXPECT_EQ(Count(Events(2), "wake"), 1);
  EXPECT_EQ(Count(Events(2), "start"), 1) << "woken, not restarted";
  EXPECT_TRUE(Events(3).empty()) << "no cold replica was started";

  ASSERT_TRUE(actuator_->ApplyTiers(ref_, 1, 1).ok());
  ASSERT_TRUE(WaitFor([&] {
    const ScaleState s = Observe();
    return s.current == 1 && s.ready == 1 && s.asleep == 1 && s.asleep_ready == 1 &&
           actuator_->Pids().size() == 2u;
  })) << Observe().detail;
  EXPECT_EQ(Count(Events(1), "sleep"), 1);
  EXPECT_EQ(Count(Events(2), "sigterm"), 1);
  EXPECT_EQ(Count(Events(0), "sleep"), 0);
}

// The same against the project's model server, which serves vLLM's sleep-mode endpoints: the
// replica the engine put to sleep says so on GET /is_sleeping and refuses completions.
TEST_F(LocalActuatorTest, WarmTierDrivesTheModelServersSleepMode) {
  ASSERT_TRUE(StartWith(Config(SleepingModelServers("0.1", "{}")), 0).ok());
  auto sleeping = [&](int replica) {
    HttpRequest req;
    req.url = "http://127.0.0.1:" + std::to_string(port_ + replica) + "/is_sleeping";
    const Result<HttpResponse> r = http_.Send(req);
    return r.ok() && r->body.find("\"is_sleeping\": true") != std::string::npos;
  };
  ASSERT_TRUE(actuator_->ApplyTiers(ref_, 1, 1).ok());
  ASSERT_TRUE(WaitFor([&] { return Observe().asleep_ready == 1 && ReadyIs(1, 1); }))
      << Observe().detail;
  EXPECT_TRUE(sleeping(1));
  EXPECT_FALSE(sleeping(0));
  ASSERT_TRUE(actuator_->ApplyTiers(ref_, 2, 0).ok());
  ASSERT_TRUE(WaitFor([&] {
    return ReadyIs(2, 2) && Observe().asleep == 0 && Observe().asleep_ready == 0;
  })) << Observe().detail;
  EXPECT_FALSE(sleeping(1));
}

// A wake takes as long as the weights take to come back (here 60 s, past the test's
// patience): while it runs, the supervisor still starts and probes the cold replica a scale-up
// also needs, and the waking one serves nothing until its wake answers.
TEST_F(LocalActuatorTest, WarmTierSlowWakeDoesNotHoldUpTheSupervisor) {
  ASSERT_TRUE(StartWith(Config(SleepingModelServers("60", "{timeout: 90s}")), 0).ok());
  ASSERT_TRUE(actuator_->ApplyTiers(ref_, 1, 1).ok());
  ASSERT_TRUE(WaitFor([&] { return Observe().asleep_ready == 1 && ReadyIs(1, 1); }))
      << Observe().detail;
  ASSERT_TRUE(actuator_->ApplyTiers(ref_, 3, 0).ok());
  ASSERT_TRUE(WaitFor([&] { return ReadyIs(3, 2); })) << Observe().detail;
  const ScaleState s = Observe();
  EXPECT_EQ(s.ready, 2) << "replicas 0 and 2 serve; replica 1 is still waking";
  auto eps = actuator_->Endpoints(ref_);
  ASSERT_TRUE(eps.ok());
  ASSERT_EQ(eps->size(), 3u);
  EXPECT_FALSE((*eps)[1].ready) << "a replica still waking takes no requests";
  EXPECT_TRUE((*eps)[2].ready);
}

// Without `warm_tier`, keeping replicas asleep is refused with a reason the Controller shows;
// nothing asleep is plain Apply.
TEST_F(LocalActuatorTest, WarmTierOffRefusesSleepersClearly) {
  ASSERT_TRUE(StartWith(Config(kHttpServer), 0).ok());
  const Status st = actuator_->ApplyTiers(ref_, 2, 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalid);
  EXPECT_NE(st.message().find("no warm_tier"), std::string::npos) << st.message();
  EXPECT_EQ(Observe().current, 0) << "a refused call changes nothing";
  ASSERT_TRUE(actuator_->ApplyTiers(ref_, 1, 0).ok());
  EXPECT_EQ(Observe().current, 1);
}

// torchrun mode: the agent hosting the rendezvous store (here replica 2, so the rule differs
// from "highest index first") is stopped only when it is the last replica.
TEST_F(LocalActuatorTest, TorchrunModeNeverStopsTheRendezvousHostFirst) {
  ASSERT_TRUE(
      StartWith(Config(std::string(kHttpServer) + "  rendezvous_host_replica: 2\n"), 3).ok());
  ASSERT_TRUE(WaitFor([&] { return ReadyIs(3, 3); })) << Observe().detail;
  ASSERT_TRUE(actuator_->Apply(ref_, 2).ok());
  ASSERT_TRUE(WaitFor([&] { return Count(Events(1), "sigterm") == 1 && ReadyIs(2, 2); }));
  EXPECT_EQ(Count(Events(2), "sigterm"), 0);
  ASSERT_TRUE(actuator_->Apply(ref_, 1).ok());
  ASSERT_TRUE(WaitFor([&] { return Count(Events(0), "sigterm") == 1 && ReadyIs(1, 1); }));
  EXPECT_EQ(Count(Events(2), "sigterm"), 0);
  auto eps = actuator_->Endpoints(ref_);
  ASSERT_TRUE(eps.ok());
  ASSERT_EQ(eps->size(), 1u);
  EXPECT_EQ((*eps)[0].instance, "llm-2");
  ASSERT_TRUE(actuator_->Apply(ref_, 0).ok());
  ASSERT_TRUE(WaitFor([&] { return actuator_->Pids().empty(); }));
  EXPECT_EQ(Count(Events(2), "sigterm"), 1);
}

TEST_F(LocalActuatorTest, LogLineReadiness) {
  ASSERT_TRUE(StartWith(Config("  command: [/usr/bin/python3, $SCRIPT, --health-delay, '0.3',"
                               " --ready-line, 'model loaded; serving', --events,"
                               " '$DIR/events-{replica}']\n"
                               "  readiness: {log: 'loaded; serving'}\n"
                               "  log_dir: $DIR/logs\n"),
                        1)
                  .ok());
  EXPECT_EQ(Observe().ready, 0);  // not before the line
  ASSERT_TRUE(WaitFor([&] { return ReadyIs(1, 1); })) << Observe().detail;
  std::ifstream log(dir_ + "/logs/llm-0.log");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("model loaded; serving"), std::string::npos);
}

TEST_F(LocalActuatorTest, PreStopHttpHookRunsBeforeSigterm) {
  ASSERT_TRUE(StartWith(Config(std::string(kHttpServer) +
                               "  pre_stop: {http: /prestop, method: POST, timeout: 5s}\n"),
                        1)
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return ReadyIs(1, 1); })) << Observe().detail;
  ASSERT_TRUE(actuator_->Apply(ref_, 0).ok());
  ASSERT_TRUE(WaitFor([&] { return actuator_->Pids().empty(); }));
  const std::vector<std::string> events = Events(0);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].rfind("start", 0), 0u);
  EXPECT_EQ(events[1], "prestop");
  EXPECT_EQ(events[2], "sigterm");
}

TEST_F(LocalActuatorTest, HangingPreStopCommandIsCutOffByItsTimeout) {
  // The hook records itself, then hangs (exec sleep keeps its pid) until it is killed.
  ASSERT_TRUE(StartWith(Config(std::string(kHttpServer) +
                               "  pre_stop: {command: [/bin/sh, -c, 'echo prestop $$ >>"
                               " $DIR/events-{replica}; exec sleep 30'], timeout: 300ms}\n"),
                        1)
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return ReadyIs(1, 1); })) << Observe().detail;
  ASSERT_TRUE(actuator_->Apply(ref_, 0).ok());
  ASSERT_TRUE(WaitFor([&] { return actuator_->Pids().empty(); }));
  const std::vector<std::string> events = Events(0);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].rfind("prestop ", 0), 0u);
  EXPECT_EQ(events[2], "sigterm");  // after the hook's timeout, not never
}

TEST_F(LocalActuatorTest, ReplicaIgnoringSigtermIsKilledAfterGrace) {
  ASSERT_TRUE(StartWith(Config("  command: [/usr/bin/python3, $SCRIPT, --ignore-term,"
                               " --events, '$DIR/events-{replica}']\n"
                               "  grace_period: 300ms\n"),
                        1)
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Count(Events(0), "start") == 1; }));
  const std::vector<pid_t> pids = actuator_->Pids();
  ASSERT_EQ(pids.size(), 1u);
  ASSERT_TRUE(actuator_->Apply(ref_, 0).ok());
  ASSERT_TRUE(WaitFor([&] { return actuator_->Pids().empty(); }));
  EXPECT_EQ(Count(Events(0), "sigterm"), 1);  // it saw SIGTERM and stayed...
  EXPECT_TRUE(ProcessGone(pids[0]));          // ...until SIGKILL
}

TEST_F(LocalActuatorTest, CrashedReplicaIsReportedNotReadyAndRestarted) {
  // The first run exits with status 3 after 0.2 s; the restart serves.
  ASSERT_TRUE(StartWith(Config("  command: [/usr/bin/python3, $SCRIPT, --port, '{port}',"
                               " --events, '$DIR/events-{replica}', --crash-once, '$DIR/crashed']\n"
                               "  base_port: $BASE\n  readiness: {http: /health}\n"
                               "  restart_backoff: {initial: 500ms}\n"),
                        1)
                  .ok());
  std::string seen;
  ASSERT_TRUE(WaitFor([&] {
    const ScaleState s = Observe();
    if (s.detail.find("exited with status 3") != std::string::npos) seen = s.detail;
    return !seen.empty() && s.ready == 1;
  })) << Observe().detail;
  EXPECT_NE(seen.find("replica 0 exited with status 3"), std::string::npos) << seen;
  EXPECT_EQ(Count(Events(0), "start"), 2);
}

// A job's replicas that exit 0 finished it (restart_policy OnFailure, torchrun mode's default):
// none is started again, not even on a later Apply, and once none runs the workload is
// completed. A service (Always, the default otherwise) is started again after exit 0.
TEST_F(LocalActuatorTest, ExitZeroCompletesAJobUnderOnFailure) {
  struct Case {
    std::string name;
    std::string extra;  // target fields
    bool completes;
  };
  const std::vector<Case> cases = {
      {"OnFailure", "  restart_policy: OnFailure\n", true},
      {"torchrun mode's default", "  rendezvous_host_replica: 0\n", true},
      {"Always (the default)", "", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::error_code ec;
    fs::remove(dir_ + "/finish", ec);
    fs::remove(dir_ + "/events-0", ec);
    fs::remove(dir_ + "/events-1", ec);
    // Each replica records its start and exits 0 once $DIR/finish exists.
    ASSERT_TRUE(
        StartWith(Config("  command: [/bin/sh, -c, 'echo start $$ >> $DIR/events-{replica}; "
                         "while [ ! -e $DIR/finish ]; do sleep 0.05; done; exit 0']\n"
                         "  restart_backoff: {initial: 100ms, max: 100ms}\n" +
                         c.extra),
                  2)
            .ok());
    ASSERT_TRUE(WaitFor([&] { return ReadyIs(2, 2); })) << Observe().detail;
    EXPECT_FALSE(Observe().completed);
    std::ofstream(dir_ + "/finish") << "1";
    if (c.completes) {
      ASSERT_TRUE(WaitFor([&] { return Observe().completed && Observe().ready == 0; }))
          << Observe().detail;
      const ScaleState s = Observe();
      EXPECT_EQ(s.current, 2);
      EXPECT_EQ(s.ready, 0);
      EXPECT_NE(s.detail.find("replica 0 exited 0: the job finished"), std::string::npos)
          << s.detail;
      ASSERT_TRUE(actuator_->Apply(ref_, 3).ok());
      // Several supervisor ticks (0.1 s) and backoffs: a restart would have happened by now.
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
      EXPECT_TRUE(actuator_->Pids().empty());
      EXPECT_EQ(Count(Events(0), "start"), 1);
      EXPECT_EQ(Count(Events(1), "start"), 1);
      EXPECT_EQ(Count(Events(2), "start"), 0);
    } else {
      ASSERT_TRUE(WaitFor([&] { return Count(Events(0), "start") >= 2; })) << Observe().detail;
      EXPECT_FALSE(Observe().completed);
    }
    for (pid_t pid : actuator_->Pids()) pids_.insert(pid);
    actuator_->Shutdown();
    actuator_.reset();
  }
}

TEST_F(LocalActuatorTest, CrashLoopBacksOff) {
  ASSERT_TRUE(StartWith(Config("  command: '/bin/sh $TESTDATA/crash.sh $DIR/events-{replica}'\n"
                               "  readiness: {log: never printed}\n"
                               "  restart_backoff: {initial: 100ms, max: 400ms}\n"),
                        1)
                  .ok());
  std::string detail;
  ASSERT_TRUE(WaitFor([&] {
    detail = Observe().detail;
    return detail.find("times in a row") != std::string::npos && Count(Events(0), "start") >= 4;
  })) << detail;
  EXPECT_NE(detail.find("replica 0 exited with status 1 ("), std::string::npos) << detail;
  EXPECT_NE(detail.find("; next start in "), std::string::npos) << detail;
  // Over 2 s, doubling delays from 0.1 s to 0.4 s allow about 6 starts; without backoff the
  // 0.1 s supervisor tick would allow 20.
  const int before = Count(Events(0), "start");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const int during = Count(Events(0), "start") - before;
  EXPECT_GE(during, 2);
  EXPECT_LE(during, 10);
  EXPECT_EQ(Observe().ready, 0);
}

TEST_F(LocalActuatorTest, ReplicaNeverReadyIsRestartedAfterReadyTimeout) {
  ASSERT_TRUE(StartWith(Config("  command: [/usr/bin/python3, $SCRIPT, --port, '{port}',"
                               " --health-delay, '1000', --events, '$DIR/events-{replica}']\n"
                               "  base_port: $BASE\n  readiness: {http: /health}\n"
                               "  ready_timeout: 700ms\n  grace_period: 2s\n"
                               "  restart_backoff: {initial: 100ms}\n"),
                        1)
                  .ok());
  std::string seen;
  ASSERT_TRUE(WaitFor([&] {
    const std::string d = Observe().detail;
    if (d.find("was not ready after 0.7 s") != std::string::npos) seen = d;
    return !seen.empty() && Count(Events(0), "start") >= 2;
  })) << Observe().detail;
  EXPECT_NE(seen.find("replica 0 was not ready after 0.7 s and was stopped"), std::string::npos)
      << seen;
  EXPECT_GE(Count(Events(0), "sigterm"), 1);
}

TEST_F(LocalActuatorTest, StartFailsClearlyWhenTheCommandDoesNotExist) {
  struct Case {
    const char* name;
    std::string command;
    StatusCode code;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"absolute path", "[/nonexistent/aiscale-no-such-server]", StatusCode::kNotFound,
       "command /nonexistent/aiscale-no-such-server not found"},
      {"name in PATH", "[aiscale-no-such-server-xyz, --flag]", StatusCode::kNotFound,
       "command aiscale-no-such-server-xyz not found in PATH"},
      {"not executable", "[$DIR/c.txt]", StatusCode::kPermissionDenied, "is not an executable"},
      {"string command", "'aiscale-no-such-server-xyz --port 1'", StatusCode::kNotFound,
       "command aiscale-no-such-server-xyz not found in PATH"},
  };
  std::ofstream(dir_ + "/c.txt") << "not a program\n";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Status st = StartWith(Config("  command: " + c.command + "\n"), 1);
    EXPECT_EQ(st.code(), c.code) << st.message();
    EXPECT_NE(st.message().find("unable to start local workload llm"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find(c.want), std::string::npos) << st.message();
    EXPECT_TRUE(actuator_->Pids().empty());
  }
}

TEST_F(LocalActuatorTest, PortInUseIsAClearError) {
  Listener squatter(port_ + 1);
  ASSERT_TRUE(squatter.ok());
  const std::string taken = "port " + std::to_string(port_ + 1);
  // At start, for an initial replica: Start fails.
  Status st = StartWith(Config(kHttpServer), 2);
  EXPECT_TRUE(st.IsUnavailable()) << st.message();
  EXPECT_NE(st.message().find(taken + " (replica 1) is still in use"), std::string::npos)
      << st.message();
  // On a scale-up: the replica says so, and backs off.
  ASSERT_TRUE(
      StartWith(Config(std::string(kHttpServer) + "  restart_backoff: {initial: 200ms}\n"), 1)
          .ok());
  ASSERT_TRUE(actuator_->Apply(ref_, 2).ok());
  std::string detail;
  ASSERT_TRUE(WaitFor([&] {
    const ScaleState s = Observe();
    detail = s.detail;
    return s.ready == 1 && detail.find("times in a row") != std::string::npos;
  })) << detail;
  EXPECT_NE(detail.find("replica 1: " + taken + " is already in use by another process"),
            std::string::npos)
      << detail;
  EXPECT_EQ(Count(Events(1), "start"), 0);
}

TEST_F(LocalActuatorTest, ChildrenOfAReplicaDieWithItsGroup) {
  ASSERT_TRUE(StartWith(Config("  command: [/usr/bin/python3, $SCRIPT, --spawn-child,"
                               " --events, '$DIR/events-{replica}']\n"
                               "  grace_period: 2s\n"),
                        1)
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Count(Events(0), "child") == 1; }));
  pid_t child = 0;
  for (const std::string& e : Events(0)) {
    if (e.rfind("child ", 0) == 0) child = std::stoi(e.substr(6));
  }
  ASSERT_GT(child, 1);
  EXPECT_FALSE(ProcessGone(child));
  ASSERT_TRUE(actuator_->Apply(ref_, 0).ok());
  ASSERT_TRUE(WaitFor([&] { return actuator_->Pids().empty(); }));
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(child); }, Seconds(5)));
}

TEST_F(LocalActuatorTest, StartKillsGroupsACrashedPreviousRunLeftBehind) {
  fs::create_directories(dir_ + "/run");
  // A leftover of ours (the record matches the live process) and a stranger whose pid the
  // record names but whose start time differs (the pid was reused): only the first dies.
  const Result<pid_t> leftover = SpawnGroup({{"/bin/sleep", "60"}, "", {}, ""});
  const Result<pid_t> stranger = SpawnGroup({{"/bin/sleep", "60"}, "", {}, ""});
  ASSERT_TRUE(leftover.ok() && stranger.ok());
  pids_.insert(*leftover);
  const uint64_t start = ReadProcStat(*leftover)->start_ticks;
  ASSERT_TRUE(WriteRunRecord(dir_ + "/run/llm-0.pid", {*leftover, *leftover, start}).ok());
  ASSERT_TRUE(WriteRunRecord(dir_ + "/run/llm-1.pid",
                             {*stranger, *stranger, ReadProcStat(*stranger)->start_ticks + 7})
                  .ok());

  ASSERT_TRUE(StartWith(Config("  command: [/bin/sleep, '60']\n"), 0).ok());
  EXPECT_TRUE(ProcessGone(*leftover));
  EXPECT_FALSE(ProcessGone(*stranger));
  EXPECT_FALSE(fs::exists(dir_ + "/run/llm-0.pid"));
  EXPECT_FALSE(fs::exists(dir_ + "/run/llm-1.pid"));
  // Both are this test's children: reap them.
  kill(*stranger, SIGKILL);
  EXPECT_EQ(waitpid(*leftover, nullptr, 0), *leftover);
  EXPECT_EQ(waitpid(*stranger, nullptr, 0), *stranger);
}

// A real "aiscale" (a forked copy of this test running an actuator) is SIGKILLed: its replicas
// get SIGTERM from PR_SET_PDEATHSIG; one that ignores it is killed by the next Start, which
// finds it recorded in the run dir.
TEST_F(LocalActuatorTest, ReplicasDoNotOutliveAKilledAiscale) {
  struct Case {
    const char* name;
    const char* flags;
    bool survives_sigterm;
  };
  const std::vector<Case> cases = {{"honours SIGTERM", "", false},
                                   {"ignores SIGTERM", ", --ignore-term", true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::error_code ec;
    fs::remove(dir_ + "/events-0", ec);
    const LocalTargetConfig cfg = Config(std::string("  command: [/usr/bin/python3, $SCRIPT") +
                                         c.flags + ", --events, '$DIR/events-{replica}']\n");
    const pid_t aiscale = fork();
    if (aiscale == 0) {
      SystemClock clock;
      CurlHttpClient http;
      LocalActuator doomed(ref_, cfg, clock, http, 1);
      if (!doomed.Start().ok()) _exit(2);
      for (;;) pause();
    }
    ASSERT_GT(aiscale, 0);
    // Killed and reaped on every path, the failed ones included.
    std::shared_ptr<void> reap(nullptr, [aiscale](void*) {
      kill(aiscale, SIGKILL);
      waitpid(aiscale, nullptr, 0);
    });
    ASSERT_TRUE(WaitFor([&] { return Count(Events(0), "start") == 1; }));
    const pid_t replica = RecordedPids().at(0);
    reap.reset();
    // At least one: the kernel sends the parent-death signal each time the replica is
    // reparented, and when the thread that spawned it (the supervisor) dies before the rest of
    // the killed process, it is reparented twice (to a live sibling thread, then to init), so
    // a replica that ignores SIGTERM may record two. (Waiting for exactly one failed under
    // load, when the second came before the first was seen.)
    ASSERT_TRUE(WaitFor([&] { return Count(Events(0), "sigterm") >= 1; }))
        << "replica " << replica << " events: " << ::testing::PrintToString(Events(0))
        << ", recorded pids: " << ::testing::PrintToString(RecordedPids());
    if (!c.survives_sigterm) {
      EXPECT_TRUE(WaitFor([&] { return ProcessGone(replica); }));
      continue;
    }
    EXPECT_FALSE(ProcessGone(replica));
    ASSERT_TRUE(StartWith(cfg, 0).ok());
    EXPECT_TRUE(ProcessGone(replica));
  }
}

TEST_F(LocalActuatorTest, RecordsPidsInTheRunDirWhileRunning) {
  ASSERT_TRUE(StartWith(Config("  command: [/bin/sleep, '60']\n"), 2).ok());
  ASSERT_TRUE(WaitFor([&] { return actuator_->Pids().size() == 2u && ReadyIs(2, 2); }));
  for (pid_t pid : actuator_->Pids()) pids_.insert(pid);
  Result<RunRecord> rec = ReadRunRecord(dir_ + "/run/llm-1.pid");
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  EXPECT_TRUE(pids_.count(rec->pid));
  EXPECT_EQ(rec->pgid, rec->pid);
  EXPECT_EQ(rec->start_ticks, ReadProcStat(rec->pid)->start_ticks);
  actuator_->Shutdown();
  EXPECT_FALSE(fs::exists(dir_ + "/run/llm-1.pid"));
  EXPECT_TRUE(actuator_->Apply(ref_, 1).IsUnavailable());
}

TEST_F(LocalActuatorTest, RejectsOtherWorkloadsAndNegativeCounts) {
  ASSERT_TRUE(StartWith(Config("  command: [/bin/sleep, '60']\n"), 0).ok());
  const WorkloadRef other{"InferenceService", "", "other"};
  EXPECT_TRUE(actuator_->Observe(other).status().IsNotFound());
  EXPECT_TRUE(actuator_->Apply(other, 1).IsNotFound());
  EXPECT_TRUE(actuator_->Endpoints(other).status().IsNotFound());
  EXPECT_TRUE(actuator_->Apply(ref_, -1).IsInvalid());
  EXPECT_TRUE(actuator_->Start().IsConflict());
}

}  // namespace
}  // namespace aiscale::act
