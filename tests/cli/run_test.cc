// `aiscale run` as a user runs it: the built binary on configs written to a temp dir, with
// real replicas (tests/integration/tools/model_server.py under /usr/bin/python3) on ports the
// kernel says are free. Every process the binary starts inherits a marker in its environment,
// so the test finds what was left behind by that marker, never by a name, and kills it by PID.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "store/sqlite_store.h"

namespace aiscale::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarkVar = "AISCALE_RUN_TEST_MARK";

// A listening socket on 127.0.0.1, held until destroyed (a port "in use"); port 0 picks one.
class Listener {
 public:
  explicit Listener(int port = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 4) != 0) {
      Close();
      return;
    }
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { Close(); }
  int port() const { return port_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

int FreePort() { return Listener().port(); }

// A port p with p+1 also free (replicas 0 and 1 listen on base_port + i).
int FreePortPair() {
  for (int tries = 0; tries < 50; ++tries) {
    Listener first;
    Listener second(first.port() + 1);
    if (first.port() > 0 && second.port() > 0) return first.port();
  }
  return 0;
}

// Processes whose environment carries `mark` (what the daemon under test started).
std::vector<pid_t> MarkedPids(const std::string& mark) {
  const std::string want = std::string(kMarkVar) + "=" + mark;
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos || paren + 2 >= line.size()) continue;
    const char state = line[paren + 2];
    if (state == 'Z' || state == 'X') continue;
    std::ifstream env(e.path() / "environ", std::ios::binary);
    std::string var;
    while (std::getline(env, var, '\0')) {
      if (var == want) {
        out.push_back(static_cast<pid_t>(std::stoi(name)));
        break;
      }
    }
  }
  return out;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One `aiscale run` process with its own temp dir, marker and log. The destructor kills
// whatever it left (the daemon first, then marked leftovers), so a failing test cleans up.
class RunFixture {
 public:
  explicit RunFixture(const std::string& name)
      : dir_(fs::path(::testing::TempDir()) /
             ("aiscale_run_" + name + "_" + std::to_string(::getpid()))),
        mark_(name + "-" + std::to_string(::getpid())) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~RunFixture() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (pid_t p : MarkedPids(mark_)) ::kill(p, SIGKILL);
    fs::remove_all(dir_);
  }
  const fs::path& dir() const { return dir_; }
  std::string store() const { return (dir_ / "store.db").string(); }
  std::string WriteConfig(const std::string& text) const {
    const std::string path = (dir_ / "aiscale.yaml").string();
    std::ofstream(path) << text;
    return path;
  }
  // Starts `aiscale run ARGS...`, stdout and stderr to dir/aiscale.log.
  void Start(const std::vector<std::string>& args) {
    pid_ =
        SpawnAiscale(args, (dir_ / "aiscale.log").string(), {std::string(kMarkVar) + "=" + mark_});
  }
  // The exit code, or -1 if it did not exit within `limit` (then it is killed) or died of a
  // signal.
  int Wait(std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = 0;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  int RunToExit(const std::vector<std::string>& args) {
    Start(args);
    return Wait();
  }
  pid_t pid() const { return pid_; }
  std::string log() const { return ReadFile(dir_ / "aiscale.log"); }
  // What is still running with this run's marker, the daemon itself excluded.
  std::vector<pid_t> Replicas() const {
    std::vector<pid_t> out;
    for (pid_t p : MarkedPids(mark_)) {
      if (p != pid_) out.push_back(p);
    }
    return out;
  }
  std::vector<Decision> Decisions(const std::string& workload) const {
    auto s = store::SqliteStore::Open(store());
    if (!s.ok()) return {};
    auto r = (*s)->Recent(workload, 100);
    return r.ok() ? *r : std::vector<Decision>{};
  }

 private:
  fs::path dir_;
  std::string mark_;
  pid_t pid_ = 0;
};

struct ConfigOptions {
  int server_port = 0;  // 0: any free port
  int base_port = 0;
  int replicas = 2;     // the static policy's size
  std::string command;  // default: the model server
  bool target = true;
  std::string period = "1s";
  std::string store_fields;  // more fields of the store map, each with a leading ", "
  std::string policy;        // default: static at `replicas`
};

std::string Config(const RunFixture& f, const ConfigOptions& o) {
  const std::string server =
      std::string(AISCALE_SOURCE_DIR) + "/tests/integration/tools/model_server.py";
  const std::string command = o.command.empty()
                                  ? "[/usr/bin/python3, " + server +
                                        ", --port, '{port}', --ready-after, '0.2', --drain, '0.5']"
                                  : o.command;
  std::string text =
      "apiVersion: aiscale.dev/v1alpha1\n"
      "kind: ControllerConfig\n"
      "spec:\n"
      "  period: " +
      o.period +
      "\n"
      // Every tick stored (no heartbeat filtering): these tests count the daemon's decisions.
      "  store: {path: " +
      f.store() + ", heartbeat: 0" + o.store_fields +
      "}\n"
      "  server: {port: " +
      std::to_string(o.server_port) +
      "}\n"
      "  workloads:\n"
      "    - name: svc\n"
      "      kind: Deployment\n"
      "      min_replicas: 1\n"
      "      max_replicas: 4\n"
      "      policy: " +
      (o.policy.empty() ? "{name: static, replicas: " + std::to_string(o.replicas) + "}"
                        : o.policy) +
      "\n";
  if (o.target) {
    text +=
        "      target:\n"
        "        engine: local\n"
        "        command: " +
        command +
        "\n"
        "        base_port: " +
        std::to_string(o.base_port) +
        "\n"
        "        readiness: {http: /health}\n"
        "        grace_period: 3s\n";
  }
  return text;
}

TEST(Run, OnceScalesRecordsOneDecisionAndLeavesNothingBehind) {
  RunFixture f("once");
  ConfigOptions o;
  o.base_port = FreePortPair();
  const std::string cfg = f.WriteConfig(Config(f, o));
  EXPECT_EQ(f.RunToExit({"run", "-c", cfg, "--once"}), 0) << f.log();
  const std::string log = f.log();
  EXPECT_NE(log.find("svc: engine local, starting at 1 replica(s)"), std::string::npos) << log;
  EXPECT_NE(log.find("action=scaled (1 -> 2)"), std::string::npos) << log;
  EXPECT_NE(log.find("aiscale: stopped"), std::string::npos) << log;
  // Whether the initial replica got to start before the stop is a race (--once stops right
  // after its tick); SigtermFinishesTheTick... shows replicas that run. Either way none is left.
  const std::vector<Decision> ds = f.Decisions("svc");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].policy, "static");
  EXPECT_EQ(ds[0].current, 1);
  EXPECT_EQ(ds[0].constrained, 2);
  EXPECT_EQ(ds[0].action, Action::kScaled);
  EXPECT_TRUE(f.Replicas().empty());
}

TEST(Run, DryRunOnceRecordsWhatItWouldDoAndStartsNothingMore) {
  RunFixture f("dryrun");
  ConfigOptions o;
  o.base_port = FreePortPair();
  o.replicas = 3;
  const std::string cfg = f.WriteConfig(Config(f, o));
  EXPECT_EQ(f.RunToExit({"run", "-c", cfg, "--once", "--dry-run"}), 0) << f.log();
  const std::vector<Decision> ds = f.Decisions("svc");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].action, Action::kNone);
  EXPECT_EQ(ds[0].constrained, 3);
  EXPECT_EQ(ds[0].action_detail, "dry run: would scale 1 -> 3");
  EXPECT_NE(f.log().find("dry run: would scale 1 -> 3"), std::string::npos) << f.log();
  const fs::path logs = f.dir() / "store.db.run" / "local";
  EXPECT_FALSE(fs::exists(logs / "svc-1.log"));
  EXPECT_FALSE(fs::exists(logs / "svc-2.log"));
  EXPECT_TRUE(f.Replicas().empty());
}

// store.state_every_ticks: states are written once in so many ticks, so a run that stops
// before a state's turn (here: one tick of a thousand, and nothing scaled) must flush it on
// its way out, or a restart would find nothing the policies learned. static-peak without a
// size learns one: the replicas it found.
TEST(Run, ACleanStopWritesStatesTheCadenceHadNotWrittenYet) {
  RunFixture f("flush");
  ConfigOptions o;
  o.base_port = FreePortPair();
  o.policy = "{name: static-peak}";
  o.store_fields = ", state_every_ticks: 1000";
  const std::string cfg = f.WriteConfig(Config(f, o));
  EXPECT_EQ(f.RunToExit({"run", "-c", cfg, "--once", "--dry-run"}), 0) << f.log();
  auto s = store::SqliteStore::Open(f.store());
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto state = (*s)->LoadState("svc/policy");
  ASSERT_TRUE(state.ok()) << state.status().message();
  EXPECT_EQ(state->Get("replicas", -1), 1);
}

// The API's view of workload svc, or null when the daemon does not answer (yet).
nlohmann::json Workload(int port) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(1);
  cli.set_read_timeout(2);
  auto res = cli.Get("/api/v1/workloads/svc");
  if (!res || res->status != 200) return nullptr;
  return nlohmann::json::parse(res->body, nullptr, false);
}

// Polls the API (60 s at most) until `done` holds for workload svc's view.
bool AwaitWorkload(int port, const std::function<bool(const nlohmann::json&)>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    const nlohmann::json w = Workload(port);
    if (w.is_object() && done(w)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(Run, DryRunHoldsTheInitialReplicasTickAfterTick) {
  RunFixture f("dryrunlive");
  ConfigOptions o;
  o.base_port = FreePortPair();
  o.server_port = FreePort();
  o.replicas = 3;
  const std::string cfg = f.WriteConfig(Config(f, o));
  f.Start({"run", "-c", cfg, "--dry-run"});
  // The initial replica is up and at least three ticks wanted 3 without applying it.
  ASSERT_TRUE(AwaitWorkload(o.server_port, [&](const nlohmann::json& w) {
    return w.value("ready", 0) == 1 && f.Decisions("svc").size() >= 3;
  })) << f.log();
  const nlohmann::json w = Workload(o.server_port);
  EXPECT_EQ(w.value("current", -1), 1) << w.dump();
  EXPECT_EQ(f.Replicas().size(), 1u);
  for (const Decision& d : f.Decisions("svc")) {
    EXPECT_EQ(d.action, Action::kNone);
    EXPECT_EQ(d.current, 1);
    EXPECT_EQ(d.action_detail, "dry run: would scale 1 -> 3");
  }
  ASSERT_EQ(::kill(f.pid(), SIGTERM), 0);
  EXPECT_EQ(f.Wait(), 0) << f.log();
  EXPECT_TRUE(f.Replicas().empty());
}

TEST(Run, StartupErrorsExitOneWithAClearMessageAndLeaveNoProcess) {
  struct Case {
    const char* name;
    std::function<void(ConfigOptions&, std::vector<std::unique_ptr<Listener>>&)> setup;
    std::function<std::string(const RunFixture&, const ConfigOptions&)> text;
    std::string want;  // in the log; "{cfg}" becomes the config's path
  };
  auto plain = [](const RunFixture& f, const ConfigOptions& o) { return Config(f, o); };
  const std::vector<Case> cases = {
      {"api port in use",
       [](ConfigOptions& o, auto& held) {
         held.push_back(std::make_unique<Listener>());
         o.server_port = held.back()->port();
       },
       plain, "unable to listen on 127.0.0.1:{server_port}: Address already in use"},
      {"replica port in use",
       [](ConfigOptions& o, auto& held) {
         held.push_back(std::make_unique<Listener>(o.base_port));
       },
       plain, "port {base_port} (replica 0) is still in use by another process after 5 s"},
      {"command not found", [](ConfigOptions& o, auto&) { o.command = "[/nonexistent/serve]"; },
       plain, "command /nonexistent/serve not found"},
      {"no target", [](ConfigOptions& o, auto&) { o.target = false; }, plain,
       "workload svc has no target: `aiscale run` needs to know which engine runs it"},
      {"config error", [](ConfigOptions& o, auto&) { o.period = "soon"; }, plain,
       "{cfg}:4:11: spec.period: must be a duration"},
      // The pool's size and the workload's gpus_per_replica reach the local engine's slots.
      {"replica larger than the local pool", [](ConfigOptions&, auto&) {},
       [](const RunFixture& f, const ConfigOptions& o) {
         return Config(f, o) + "      gpus_per_replica: 2\n  pool: {size: 1}\n";
       },
       "unable to start local workload svc: a replica needs 2 GPU slots but the pool has 1"},
      {"local pool past its bound", [](ConfigOptions&, auto&) {},
       [](const RunFixture& f, const ConfigOptions& o) {
         return Config(f, o) + "  pool: {size: 2000}\n";
       },
       "pool.size 2000 is more GPU slots than the local engine takes (at most 1024"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RunFixture f(std::string("err") + std::to_string(&c - cases.data()));
    ConfigOptions o;
    o.base_port = FreePortPair();
    std::vector<std::unique_ptr<Listener>> held;
    c.setup(o, held);
    const std::string cfg = f.WriteConfig(c.text(f, o));
    EXPECT_EQ(f.RunToExit({"run", "-c", cfg}), 1) << f.log();
    std::string want = c.want;
    auto subst = [&](const std::string& key, const std::string& value) {
      const size_t at = want.find(key);
      if (at != std::string::npos) want.replace(at, key.size(), value);
    };
    subst("{cfg}", cfg);
    subst("{server_port}", std::to_string(o.server_port));
    subst("{base_port}", std::to_string(o.base_port));
    const std::string log = f.log();
    EXPECT_NE(log.find(want), std::string::npos) << "want: " << want << "\nlog:\n" << log;
    EXPECT_NE(log.find("aiscale run: "), std::string::npos) << log;
    EXPECT_TRUE(f.Replicas().empty());
    EXPECT_TRUE(f.Decisions("svc").empty());
  }
}

TEST(Run, SigtermFinishesTheTickStopsTheReplicasAndExitsZero) {
  RunFixture f("sigterm");
  ConfigOptions o;
  o.base_port = FreePortPair();
  o.server_port = FreePort();
  const std::string cfg = f.WriteConfig(Config(f, o));
  f.Start({"run", "-c", cfg, "--verbose"});
  // Both replicas serve: the daemon scaled 1 -> 2 and they came up.
  ASSERT_TRUE(AwaitWorkload(o.server_port, [](const nlohmann::json& w) {
    return w.value("ready", 0) == 2;
  })) << f.log();
  EXPECT_EQ(f.Replicas().size(), 2u);  // the two model servers, nothing else
  const pid_t daemon = f.pid();
  ASSERT_EQ(::kill(daemon, SIGTERM), 0);
  EXPECT_EQ(f.Wait(), 0) << f.log();
  const std::string log = f.log();
  EXPECT_NE(log.find("aiscale: stopped"), std::string::npos) << log;
  EXPECT_TRUE(f.Replicas().empty());
  // Every tick that was logged was also recorded: none was cut off half-way.
  size_t logged = 0;
  for (size_t at = log.find("aiscale: svc "); at != std::string::npos;
       at = log.find("aiscale: svc ", at + 1)) {
    if (log.compare(at, 20, "aiscale: svc: engine") != 0) ++logged;
  }
  const std::vector<Decision> ds = f.Decisions("svc");
  EXPECT_GE(ds.size(), 2u);
  EXPECT_EQ(ds.size(), logged) << log;
  EXPECT_EQ(ds.back().current, 2);
}

// Issue 27 §6: two daemons on one store both ran (a workload sized 3 ended up with 6
// replicas), and SIGHUP killed the daemon without its clean stop. The second is refused with
// the first's pid; SIGHUP reloads the config (daemon_reload.cc) and the daemon runs on;
// SIGTERM still stops cleanly.
TEST(Run, ASecondDaemonOnTheStoreIsRefusedAndSighupDoesNotStopIt) {
  RunFixture f("onestore");
  ConfigOptions o;
  o.base_port = FreePortPair();
  o.server_port = FreePort();
  const std::string cfg = f.WriteConfig(Config(f, o));
  f.Start({"run", "-c", cfg});
  ASSERT_TRUE(AwaitWorkload(o.server_port, [](const nlohmann::json& w) {
    return w.value("ready", 0) == 2;
  })) << f.log();
  const pid_t first = f.pid();
  // The same config but another API port: only the store is shared.
  ConfigOptions other = o;
  other.server_port = FreePort();
  other.base_port = FreePortPair();
  const std::string cfg2 = (f.dir() / "second.yaml").string();
  std::ofstream(cfg2) << Config(f, other);
  const RunResult second = RunAiscale("run -c " + cfg2 + " --once");
  EXPECT_EQ(second.code, 1) << second.out;
  EXPECT_NE(second.out.find("is in use by another aiscale (pid " + std::to_string(first)),
            std::string::npos)
      << second.out;

  ASSERT_EQ(::kill(first, SIGHUP), 0);
  ASSERT_TRUE(WaitFor([&] { return f.log().find("aiscale: reloaded ") != std::string::npos; }, 10))
      << f.log();
  EXPECT_EQ(::kill(first, 0), 0);  // still running
  ASSERT_EQ(::kill(first, SIGTERM), 0);
  EXPECT_EQ(f.Wait(), 0) << f.log();
  EXPECT_NE(f.log().find("aiscale: stopped"), std::string::npos) << f.log();
  EXPECT_TRUE(f.Replicas().empty());
}

// A Prometheus on 127.0.0.1 (port 0) whose instant queries answer two series of 1 (the shape of
// tests/monitor/testdata/promql_vector_*.json), stamped now.
class TinyPrometheus {
 public:
  TinyPrometheus() {
    server_.Get("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
      const double now =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      nlohmann::json result = nlohmann::json::array();
      // One workload-wide series, no pod label: the engine spawns its replica on its own
      // thread, so a series naming svc-0 could arrive before svc-0 exists and be foreign to it
      // (workload_signals.h), which is not what this test is about.
      result.push_back({{"metric", nlohmann::json::object()}, {"value", {now, "2"}}});
      const nlohmann::json body = {{"status", "success"},
                                   {"data", {{"resultType", "vector"}, {"result", result}}}};
      res.set_content(body.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() is a no-op until the accept loop runs: wait for it, so the destructor can join.
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~TinyPrometheus() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(Run, TheFirstTickSeesTheFirstRoundOfFetches) {
  // The daemon waits for the first fetches before its first tick, so a signal that answers at
  // once is data in decision one, not "no fetch has completed yet".
  TinyPrometheus prom;
  RunFixture f("firsttick");
  const int api = FreePort();
  const std::string cfg = f.WriteConfig(
      "apiVersion: aiscale.dev/v1alpha1\n"
      "kind: ControllerConfig\n"
      "spec:\n"
      "  period: 1s\n"
      "  store: " +
      f.store() +
      "\n"
      "  server: {port: " +
      std::to_string(api) +
      "}\n"
      "  sources:\n"
      "    - {name: prom, type: prometheus, url: 'http://127.0.0.1:" +
      std::to_string(prom.port()) +
      "'}\n"
      "  workloads:\n"
      "    - name: svc\n"
      "      kind: Deployment\n"
      "      min_replicas: 1\n"
      "      max_replicas: 4\n"
      "      policy:\n"
      "        name: hpa\n"
      "        metrics: [{signal: concurrency, type: Pods, target: {type: AverageValue, value: "
      "10}}]\n"
      "      signals: [{name: concurrency, source: prom, query: 'sum(x)'}]\n"
      "      target: {engine: local, command: [/bin/sleep, '600'], grace_period: 1s}\n");
  f.Start({"run", "-c", cfg});
  ASSERT_TRUE(AwaitWorkload(api, [&](const nlohmann::json&) {
    return !f.Decisions("svc").empty();
  })) << f.log();
  ASSERT_EQ(::kill(f.pid(), SIGTERM), 0);
  EXPECT_EQ(f.Wait(), 0) << f.log();
  const std::vector<Decision> ds = f.Decisions("svc");
  ASSERT_FALSE(ds.empty());
  const Decision& first = ds.front();
  ASSERT_EQ(first.inputs.size(), 1u);
  EXPECT_EQ(first.inputs[0].status, SignalStatus::kOk) << first.inputs[0].detail;
  EXPECT_EQ(first.inputs[0].sum, 2) << first.inputs[0].detail << "\n" << f.log();
  EXPECT_TRUE(f.Replicas().empty());
}

}  // namespace
}  // namespace aiscale::cli
