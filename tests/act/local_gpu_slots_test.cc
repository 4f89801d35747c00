// LocalActuator in a pool of GPU slots (core/gpu_slots.h), against real /bin/sh replicas: two
// workloads share one table; each replica appends "start <holder> <CUDA_VISIBLE_DEVICES>
// <{gpus}>" to one log when it starts and "stop <holder>" when SIGTERM reaches it, so the log's
// order is the order in which slots were taken and given back. Outcomes are polled with
// generous timeouts; nothing depends on how fast the machine is.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "act/local_actuator.h"
#include "act/process.h"
#include "core/curl_http_client.h"
#include "core/system_clock.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;

constexpr Duration kPatience = Seconds(20);

// The replica: trap first (a SIGTERM before the start line writes a stop for a replica that
// never said it started, which the checks ignore), then the start line, then wait.
const char* kReplica =
    "  command: [/bin/sh, -c, 'trap \"echo stop $NAME-{replica} >> $DIR/log; exit 0\" TERM;"
    " echo start $NAME-{replica} $CUDA_VISIBLE_DEVICES {gpus} >> $DIR/log;"
    " while :; do sleep 0.05; done']\n"
    "  grace_period: 5s\n"
    "  log_dir: $DIR/logs\n";

class LocalGpuSlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/aiscale-gpuslots-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }

  void TearDown() override {
    std::vector<pid_t> pids;
    for (auto& [name, a] : actuators_) {
      for (pid_t pid : a->Pids()) pids.push_back(pid);
      a->Shutdown();
    }
    for (pid_t pid : pids) EXPECT_TRUE(ProcessGone(pid)) << "pid " << pid << " survived";
    if (slots_) {
      EXPECT_EQ(slots_->Free(), slots_->count()) << slots_->Describe();
    }
    actuators_.clear();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  LocalTargetConfig Config(std::string yaml, const std::string& name) {
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"$DIR", dir_}, {"$NAME", name}}) {
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

  // Starts workload `name` in slots_ (made with `count` slots on first use).
  Status StartIn(const std::string& name, int count, int per_replica, int initial,
                 const std::string& extra = "") {
    if (!slots_) slots_ = std::make_shared<GpuSlots>(count);
    auto a = std::make_unique<LocalActuator>(Ref(name), Config(kReplica + extra, name), clock_,
                                             http_, initial);
    a->UseGpuSlots(slots_, per_replica);
    Status s = a->Start();
    actuators_[name] = std::move(a);
    return s;
  }

  WorkloadRef Ref(const std::string& name) const { return {"Deployment", "", name}; }
  LocalActuator& A(const std::string& name) { return *actuators_.at(name); }
  ScaleState Observe(const std::string& name) { return A(name).Observe(Ref(name)).value(); }

  bool WaitFor(const std::function<bool()>& done, Duration timeout = kPatience) {
    const TimePoint deadline = clock_.Now() + timeout;
    while (clock_.Now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  }

  std::vector<std::string> Log() const {
    std::ifstream in(dir_ + "/log");
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  int Index(const std::string& line) const {
    const std::vector<std::string> log = Log();
    for (size_t i = 0; i < log.size(); ++i) {
      if (log[i] == line) return static_cast<int>(i);
    }
    return -1;
  }

  // Replays the log: every start takes the slots it names; false (with why) when one of them
  // is still held by a replica that has not logged its stop.
  bool NoSlotSharedInTheLog(std::string& why) const {
    std::map<int, std::string> held;  // slot -> holder
    for (const std::string& line : Log()) {
      std::istringstream in(line);
      std::string what, holder, env, arg;
      in >> what >> holder >> env >> arg;
      if (what == "stop") {
        for (auto it = held.begin(); it != held.end();) {
          it = it->second == holder ? held.erase(it) : std::next(it);
        }
        continue;
      }
      if (env != arg) {
        why = line + ": CUDA_VISIBLE_DEVICES differs from {gpus}";
        return false;
      }
      std::stringstream ids(env);
      for (std::string id; std::getline(ids, id, ',');) {
        auto [it, fresh] = held.emplace(std::stoi(id), holder);
        if (!fresh) {
          why = line + ": slot " + id + " is still held by " + it->second;
          return false;
        }
      }
    }
    return true;
  }

  SystemClock clock_;
  CurlHttpClient http_;
  std::string dir_;
  std::shared_ptr<GpuSlots> slots_;
  std::map<std::string, std::unique_ptr<LocalActuator>> actuators_;
};

// A replica that finds no free slot is not started: it is pending, the detail says who holds
// the slots, and it starts once a replica of another workload has run its pre-stop hook and
// exited, on the slot that one gave back.
TEST_F(LocalGpuSlotsTest, PendingUntilAnotherWorkloadsReplicaHasStopped) {
  ASSERT_TRUE(StartIn("a", 2, 1, 2,
                      "  pre_stop: {command: [/bin/sh, -c, 'echo prestop $NAME-{replica} {gpus}"
                      " >> $DIR/log'], timeout: 5s}\n")
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Index("start a-0 0 0") >= 0 && Index("start a-1 1 1") >= 0; }))
      << Observe("a").detail;
  ASSERT_TRUE(StartIn("b", 2, 1, 1).ok());
  ASSERT_TRUE(WaitFor([&] { return Observe("b").detail.find("pending") != std::string::npos; }))
      << Observe("b").detail;
  const ScaleState b = Observe("b");
  EXPECT_EQ(b.current, 1);
  EXPECT_EQ(b.ready, 0);
  EXPECT_NE(b.detail.find("0 of 2 GPU slots free (held: 0 a-0, 1 a-1)"), std::string::npos)
      << b.detail;
  EXPECT_TRUE(A("b").Pids().empty());

  ASSERT_TRUE(A("a").Apply(Ref("a"), 1).ok());
  ASSERT_TRUE(WaitFor([&] { return Index("start b-0 1 1") >= 0; })) << Observe("b").detail;
  // Ready (readiness none) once the supervisor has recorded the spawn: under TSan that pass
  // can come after the child has already written its log line.
  EXPECT_TRUE(WaitFor([&] { return Observe("b").ready == 1; })) << Observe("b").detail;
  EXPECT_LT(Index("start a-1 1 1"), Index("prestop a-1 1"));
  EXPECT_LT(Index("prestop a-1 1"), Index("stop a-1"));
  EXPECT_LT(Index("stop a-1"), Index("start b-0 1 1")) << "b started before a-1 gave slot 1 back";
  EXPECT_GE(Index("start a-0 0 0"), 0);
  EXPECT_EQ(slots_->Holders(), (std::vector<std::string>{"a-0", "b-0"}));
}

// A replica that crashes gives its slots back at once: the other workload's pending replica
// takes them (the crashed one waits out its restart backoff, 30 s, far longer than the test).
TEST_F(LocalGpuSlotsTest, CrashedReplicaGivesItsSlotsBack) {
  const std::string crash =
      "  command: [/bin/sh, -c, 'echo start $NAME-{replica} $CUDA_VISIBLE_DEVICES {gpus} >>"
      " $DIR/log; while [ ! -e $DIR/crash ]; do sleep 0.05; done; exit 3']\n"
      "  restart_backoff: {initial: 30s}\n"
      "  log_dir: $DIR/logs\n";
  slots_ = std::make_shared<GpuSlots>(2);
  auto a = std::make_unique<LocalActuator>(Ref("a"), Config(crash, "a"), clock_, http_, 1);
  a->UseGpuSlots(slots_, 2);
  ASSERT_TRUE(a->Start().ok());
  actuators_["a"] = std::move(a);
  ASSERT_TRUE(WaitFor([&] { return Index("start a-0 0,1 0,1") >= 0; }));
  ASSERT_TRUE(StartIn("b", 2, 1, 1).ok());
  ASSERT_TRUE(WaitFor([&] { return Observe("b").detail.find("pending") != std::string::npos; }))
      << Observe("b").detail;
  std::ofstream(dir_ + "/crash") << "now\n";
  ASSERT_TRUE(WaitFor([&] { return Index("start b-0 0 0") >= 0; })) << Observe("b").detail;
  // The replica writes its line as it starts; the supervisor marks it ready on its own thread,
  // which on a busy machine can come after the line.
  EXPECT_TRUE(WaitFor([&] { return Observe("b").ready == 1; })) << Observe("b").detail;
  EXPECT_NE(Observe("a").detail.find("exited with status 3"), std::string::npos)
      << Observe("a").detail;
}

TEST_F(LocalGpuSlotsTest, StartRefusesAReplicaLargerThanThePool) {
  Status s = StartIn("a", 2, 3, 1);
  EXPECT_TRUE(s.IsInvalid()) << s.message();
  EXPECT_NE(s.message().find("needs 3 GPU slots but the pool has 2"), std::string::npos)
      << s.message();
}

TEST_F(LocalGpuSlotsTest, GpusPlaceholderWithoutAPoolIsAnError) {
  LocalActuator a(Ref("a"), Config(kReplica, "a"), clock_, http_, 1);
  Status s = a.Start();
  EXPECT_TRUE(s.IsInvalid()) << s.message();
  EXPECT_NE(s.message().find("{gpus}"), std::string::npos) << s.message();
}

// Two workloads scaled back and forth over three slots without waiting for stops to finish:
// the log never shows a slot taken before its previous holder stopped, and once both settle
// every slot is held by exactly the running replicas.
TEST_F(LocalGpuSlotsTest, ScalingBackAndForthNeverSharesASlot) {
  ASSERT_TRUE(StartIn("a", 3, 1, 0).ok());
  ASSERT_TRUE(StartIn("b", 3, 1, 0).ok());
  for (int i = 0; i < 24; ++i) {
    const int n = (i * 5) % 4;  // 0, 1, 2, 3, 0, ...
    ASSERT_TRUE(A("a").Apply(Ref("a"), n).ok());
    ASSERT_TRUE(A("b").Apply(Ref("b"), 3 - n).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(60 + 40 * (i % 3)));
  }
  ASSERT_TRUE(A("a").Apply(Ref("a"), 1).ok());
  ASSERT_TRUE(A("b").Apply(Ref("b"), 2).ok());
  ASSERT_TRUE(WaitFor([&] { return Observe("a").ready == 1 && Observe("b").ready == 2; }))
      << Observe("a").detail << " / " << Observe("b").detail;
  std::string why;
  EXPECT_TRUE(NoSlotSharedInTheLog(why)) << why;
  std::map<char, int> by_workload;  // 'a' or 'b' -> slots held ("b-2": an index was busy)
  for (const std::string& h : slots_->Holders()) ++by_workload[h.empty() ? '-' : h[0]];
  EXPECT_EQ(by_workload, (std::map<char, int>{{'a', 1}, {'b', 2}})) << slots_->Describe();
}

}  // namespace
}  // namespace aiscale::act
