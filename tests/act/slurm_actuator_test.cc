// SlurmActuator against a fake cluster behind the CommandRunner seam: FakeSlurm answers
// squeue/sinfo (in the 22.05 JSON shapes, or the text formats), sbatch and scancel from a job
// table that the test schedules by hand, and records every command in order.
#include "act/slurm_actuator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/system_clock.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;

struct FakeJob {
  std::string id, name, comment, state = "PENDING", node;
};

class FakeSlurm final : public CommandRunner {
 public:
  explicit FakeSlurm(int nodes) {
    for (int i = 1; i <= nodes; ++i) nodes_["node" + std::to_string(i)] = "";
  }

  Result<CommandOutput> Run(const std::vector<std::string>& argv,
                            const std::vector<std::pair<std::string, std::string>>& env,
                            Duration) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string line;
    for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
    log_.push_back(line);
    for (const auto& [k, v] : env) envs_[k] = v;
    const std::string& cmd = argv[0];
    if (down_ && cmd != "pre-stop") return CommandOutput{0, kDown, ""};
    if (cmd == "squeue") return Squeue(argv);
    if (cmd == "sinfo") return Sinfo(argv);
    if (cmd == "sbatch") return Sbatch(argv);
    if (cmd == "scancel") return Scancel(argv);
    return CommandOutput{0, "", ""};
  }

  // Gives each pending job an idle node, like the scheduler.
  void Schedule() {
    std::lock_guard<std::mutex> lock(mu_);
    for (FakeJob& j : jobs_) {
      if (j.state != "PENDING") continue;
      for (auto& [node, holder] : nodes_) {
        if (!holder.empty()) continue;
        holder = j.id;
        j.state = "RUNNING";
        j.node = node;
        break;
      }
    }
  }
  // Ends a job (scancel by hand, a crash): it stays listed as CANCELLED, as in 22.05.
  void End(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    EndLocked(id);
  }
  // Ends a job with exit 0: listed as COMPLETED (for MinJobAge, as in 22.05).
  void Complete(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    for (FakeJob& j : jobs_) {
      if (j.id != id || j.state != "RUNNING") continue;
      j.state = "COMPLETED";
      nodes_[j.node].clear();
    }
  }
  void AddJob(FakeJob j) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(j));
    next_id_ = std::max(next_id_, std::stoi(jobs_.back().id) + 1);
  }
  void SetDown(bool down) {
    std::lock_guard<std::mutex> lock(mu_);
    down_ = down;
  }
  void SetJsonSupported(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    json_ = on;
  }
  std::vector<FakeJob> Active() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<FakeJob> out;
    for (const FakeJob& j : jobs_) {
      if (j.state == "PENDING" || j.state == "RUNNING") out.push_back(j);
    }
    return out;
  }
  std::vector<std::string> Log(const std::string& prefix = "") {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const std::string& l : log_) {
      if (l.rfind(prefix, 0) == 0) out.push_back(l);
    }
    return out;
  }
  std::string Env(const std::string& k) {
    std::lock_guard<std::mutex> lock(mu_);
    return envs_[k];
  }

 private:
  static constexpr const char* kDown =
      R"({"meta": {}, "errors": [{"description": "Failed while looking for jobs",
          "error_number": -1, "error": "Unspecified error", "source": "slurm_load_jobs"}],
          "jobs": []})";

  void EndLocked(const std::string& id) {
    for (FakeJob& j : jobs_) {
      if (j.id != id || (j.state != "PENDING" && j.state != "RUNNING")) continue;
      j.state = "CANCELLED";
      if (!j.node.empty()) nodes_[j.node].clear();
    }
  }

  CommandOutput Squeue(const std::vector<std::string>& argv) {
    if (argv[1] == "--json") {
      if (!json_) return CommandOutput{1, "", "squeue: unrecognized option '--json'\n"};
      nlohmann::json jobs = nlohmann::json::array();
      for (const FakeJob& j : jobs_) {
        jobs.push_back({{"job_id", std::stoi(j.id)},
                        {"name", j.name},
                        {"job_state", j.state},
                        {"nodes", j.node},
                        {"comment", j.comment},
                        {"state_reason", j.state == "PENDING" ? "Resources" : "None"}});
      }
      return CommandOutput{
          0, nlohmann::json{{"errors", nlohmann::json::array()}, {"jobs", jobs}}.dump(), ""};
    }
    // squeue -t STATES: only those (aiscale asks for the active ones and COMPLETED).
    std::string states = "PENDING,RUNNING";
    for (size_t i = 1; i + 1 < argv.size(); ++i) {
      if (argv[i] == "-t") states = "," + argv[i + 1] + ",";
    }
    std::string out;
    for (const FakeJob& j : jobs_) {
      if (states.find("," + j.state + ",") == std::string::npos) continue;
      out += j.id + "|" + j.state + "|" + j.node + "|" + j.name + "|" +
             (j.comment.empty() ? "(null)" : j.comment) + "\n";
    }
    return CommandOutput{0, out, ""};
  }

  CommandOutput Sinfo(const std::vector<std::string>& argv) {
    if (argv[1] == "--json") {
      if (!json_) return CommandOutput{1, "", "sinfo: unrecognized option '--json'\n"};
      nlohmann::json nodes = nlohmann::json::array();
      for (const auto& [name, holder] : nodes_) {
        nodes.push_back({{"name", name},
                         {"address", "10.0.0." + name.substr(4)},
                         {"state", holder.empty() ? "idle" : "allocated"},
                         {"state_flags", nlohmann::json::array()},
                         {"partitions", {"debug"}}});
      }
      return CommandOutput{
          0, nlohmann::json{{"errors", nlohmann::json::array()}, {"nodes", nodes}}.dump(), ""};
    }
    std::string out;
    for (const auto& [name, holder] : nodes_) {
      out += name + "|10.0.0." + name.substr(4) + "|" + (holder.empty() ? "idle" : "allocated") +
             "|debug*\n";
    }
    return CommandOutput{0, out, ""};
  }

  CommandOutput Sbatch(const std::vector<std::string>& argv) {
    FakeJob j;
    j.id = std::to_string(next_id_++);
    for (const std::string& a : argv) {
      if (a.rfind("--job-name=", 0) == 0) j.name = a.substr(11);
      if (a.rfind("--comment=", 0) == 0) j.comment = a.substr(10);
    }
    if (!fs::exists(argv.back())) return CommandOutput{1, "", "sbatch: error: no script\n"};
    jobs_.push_back(j);
    return CommandOutput{0, j.id + "\n", ""};
  }

  CommandOutput Scancel(const std::vector<std::string>& argv) {
    // scancel --full --signal=TERM ID: the fake job exits on SIGTERM; scancel ID ends it.
    EndLocked(argv.back());
    return CommandOutput{0, "", ""};
  }

  std::mutex mu_;
  std::vector<FakeJob> jobs_;
  std::map<std::string, std::string> nodes_;  // name -> job id holding it
  std::vector<std::string> log_;
  std::map<std::string, std::string> envs_;
  int next_id_ = 100;
  bool down_ = false;
  bool json_ = true;
};

// Readiness: the URLs that answer 200.
class FakeHttp final : public HttpClient {
 public:
  Result<HttpResponse> Send(const HttpRequest& req) override {
    std::lock_guard<std::mutex> lock(mu_);
    sent_.push_back(req.method + " " + req.url);
    if (!ok_.count(req.url)) return Status::Unavailable("connection refused");
    return HttpResponse{200, "ok", {}};
  }
  void Ready(const std::string& url) {
    std::lock_guard<std::mutex> lock(mu_);
    ok_.insert(url);
  }
  std::vector<std::string> Sent() {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_;
  }

 private:
  std::mutex mu_;
  std::set<std::string> ok_;
  std::vector<std::string> sent_;
};

class SlurmActuatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("aiscale-slurm-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "serve.sbatch")
        << "#!/bin/bash\nexec serve --port {port} --id {replica}\n";
    cfg_.script = (dir_ / "serve.sbatch").string();
    cfg_.run_dir = (dir_ / "run").string();
    cfg_.grace_period = Seconds(0);
    cfg_.partition = "debug";
  }
  void TearDown() override {
    if (act_) act_->Shutdown();
    fs::remove_all(dir_);
  }
  Status Start(int nodes, int initial) {
    slurm_ = std::make_shared<FakeSlurm>(nodes);
    act_ = std::make_unique<SlurmActuator>(ref_, cfg_, slurm_, clock_, http_, initial);
    return act_->Start(/*poll=*/false);
  }
  ScaleState Observe() {
    Result<ScaleState> s = act_->Observe(ref_);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? *s : ScaleState{};
  }
  // Schedules, waits for stops, and polls: what a few poll intervals do.
  void Settle() {
    act_->WaitForStops();
    slurm_->Schedule();
    ASSERT_TRUE(act_->Sync().ok());
  }

  WorkloadRef ref_{"InferenceService", "", "llm"};
  SlurmTargetConfig cfg_;
  fs::path dir_;
  SystemClock clock_;
  FakeHttp http_;
  std::shared_ptr<FakeSlurm> slurm_;
  std::unique_ptr<SlurmActuator> act_;
};

TEST_F(SlurmActuatorTest, ScalesOneToThreeToOneWithTaggedJobs) {
  ASSERT_TRUE(Start(3, 1).ok());
  EXPECT_EQ(slurm_->Log("sbatch").size(), 1u);
  EXPECT_EQ(Observe().current, 1);  // pending counts as requested
  EXPECT_EQ(Observe().ready, 0);
  Settle();
  EXPECT_EQ(Observe().ready, 1);

  ASSERT_TRUE(act_->Apply(ref_, 3).ok());
  EXPECT_EQ(Observe().current, 3);
  Settle();
  ScaleState s = Observe();
  EXPECT_EQ(s.current, 3);
  EXPECT_EQ(s.ready, 3);
  EXPECT_EQ(s.max_available, 3);
  EXPECT_EQ(s.detail,
            "partition debug has 0 idle node(s), so at most 3 replica(s) fit (one job per node)");
  std::set<std::string> tags;
  for (const FakeJob& j : slurm_->Active()) {
    EXPECT_EQ(j.name, "aiscale-llm");
    tags.insert(j.comment);
  }
  EXPECT_EQ(tags, (std::set<std::string>{"aiscale:llm:0", "aiscale:llm:1", "aiscale:llm:2"}));
  const std::string submit = slurm_->Log("sbatch").back();
  EXPECT_NE(submit.find("--exclusive"), std::string::npos) << submit;
  EXPECT_NE(submit.find("--partition=debug"), std::string::npos) << submit;
  std::ifstream rendered(cfg_.run_dir + "/llm-2.sbatch");
  std::string text((std::istreambuf_iterator<char>(rendered)), {});
  EXPECT_NE(text.find("--port 0 --id 2"), std::string::npos) << text;

  ASSERT_TRUE(act_->Apply(ref_, 1).ok());
  EXPECT_EQ(Observe().current, 1);  // stopping jobs no longer count
  Settle();
  ASSERT_EQ(slurm_->Active().size(), 1u);
  EXPECT_EQ(slurm_->Active()[0].comment, "aiscale:llm:0");  // the highest indices went
  const std::vector<std::string> cancels = slurm_->Log("scancel");
  ASSERT_EQ(cancels.size(), 4u);  // TERM then a final scancel, for each of the two
  EXPECT_EQ(Observe().current, 1);
  EXPECT_TRUE(act_->Apply(ref_, 1).ok());  // idempotent
  EXPECT_EQ(slurm_->Log("sbatch").size(), 3u);
}

TEST_F(SlurmActuatorTest, SignalsTermAndRunsPreStopFirst) {
  cfg_.pre_stop.kind = LocalPreStop::Kind::kCommand;
  cfg_.pre_stop.command = {"pre-stop", "{host}:{port}", "{replica}"};
  cfg_.base_port = 18100;
  ASSERT_TRUE(Start(2, 2).ok());
  Settle();
  ASSERT_TRUE(act_->Apply(ref_, 1).ok());
  act_->WaitForStops();
  std::vector<std::string> seq;
  for (const std::string& l : slurm_->Log()) {
    if (l.rfind("pre-stop", 0) == 0 || l.rfind("scancel", 0) == 0) seq.push_back(l);
  }
  ASSERT_EQ(seq.size(), 3u);
  EXPECT_EQ(seq[0], "pre-stop 10.0.0.2:18101 1");
  EXPECT_EQ(seq[1], "scancel --full --signal=TERM 101");
  EXPECT_EQ(seq[2], "scancel 101");
}

TEST_F(SlurmActuatorTest, PendingBeyondFreeNodesIsCappedWithAReason) {
  ASSERT_TRUE(Start(2, 1).ok());
  Settle();
  EXPECT_EQ(Observe().max_available, 2);  // 1 running + 1 idle
  ASSERT_TRUE(act_->Apply(ref_, 4).ok());
  Settle();
  ScaleState s = Observe();
  EXPECT_EQ(s.current, 4);
  EXPECT_EQ(s.ready, 2);
  EXPECT_EQ(s.max_available, 2);
  EXPECT_NE(s.detail.find("2 job(s) pending (Resources)"), std::string::npos) << s.detail;
  EXPECT_NE(
      s.detail.find("capped at 2: partition debug has 0 idle node(s), so at most 2 replica(s) fit"),
      std::string::npos)
      << s.detail;
  // Scaling down to what fits cancels the pending jobs first.
  ASSERT_TRUE(act_->Apply(ref_, 2).ok());
  Settle();
  for (const FakeJob& j : slurm_->Active()) EXPECT_EQ(j.state, "RUNNING");
  EXPECT_EQ(Observe().current, 2);
}

TEST_F(SlurmActuatorTest, JobEndedByHandIsResubmitted) {
  ASSERT_TRUE(Start(3, 2).ok());
  Settle();
  const std::string victim = slurm_->Active()[1].id;
  slurm_->End(victim);
  ASSERT_TRUE(act_->Sync().ok());  // the poll sees it gone and resubmits
  ScaleState s = Observe();
  EXPECT_EQ(s.current, 2);
  EXPECT_EQ(s.ready, 1);
  EXPECT_NE(s.detail.find("replica 1 (job " + victim + ") left the queue; resubmitting"),
            std::string::npos)
      << s.detail;
  Settle();
  EXPECT_EQ(Observe().ready, 2);
  EXPECT_EQ(slurm_->Log("sbatch").size(), 3u);
}

TEST_F(SlurmActuatorTest, ControllerDownIsUnavailableAndNothingIsCancelled) {
  ASSERT_TRUE(Start(3, 2).ok());
  Settle();
  slurm_->SetDown(true);
  EXPECT_FALSE(act_->Sync().ok());
  Result<ScaleState> s = act_->Observe(ref_);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsUnavailable());
  EXPECT_NE(s.status().message().find("(Slurm unavailable): squeue reported: slurm_load_jobs: "
                                      "Failed while looking for jobs"),
            std::string::npos)
      << s.status().message();
  Status st = act_->Apply(ref_, 0);
  EXPECT_TRUE(st.IsUnavailable()) << st.message();
  EXPECT_TRUE(slurm_->Log("scancel").empty());
  EXPECT_FALSE(act_->Endpoints(ref_).ok());
  slurm_->SetDown(false);
  Settle();
  EXPECT_EQ(Observe().current, 0);  // the Apply(0) it held is carried out once Slurm answers
}

TEST_F(SlurmActuatorTest, AdoptsItsOwnJobsAndIgnoresOthers) {
  slurm_ = std::make_shared<FakeSlurm>(4);
  slurm_->AddJob({"7", "aiscale-llm", "aiscale:llm:0", "PENDING", ""});
  slurm_->AddJob({"8", "aiscale-llm", "aiscale:other:0", "PENDING", ""});  // other workload
  slurm_->AddJob({"9", "batch", "aiscale:llm:1", "PENDING", ""});          // other name
  slurm_->AddJob({"10", "aiscale-llm", "", "PENDING", ""});                // untagged
  slurm_->Schedule();
  act_ = std::make_unique<SlurmActuator>(ref_, cfg_, slurm_, clock_, http_, 1);
  ASSERT_TRUE(act_->Start(false).ok());
  EXPECT_TRUE(slurm_->Log("sbatch").empty());
  EXPECT_EQ(Observe().current, 1);
  EXPECT_EQ(Observe().ready, 1);
  ASSERT_TRUE(act_->Apply(ref_, 0).ok());
  act_->WaitForStops();
  EXPECT_EQ(slurm_->Log("scancel"),
            (std::vector<std::string>{"scancel --full --signal=TERM 7", "scancel 7"}));
}

TEST_F(SlurmActuatorTest, DuplicateIndexKeepsTheOldestJob) {
  slurm_ = std::make_shared<FakeSlurm>(3);
  slurm_->AddJob({"20", "aiscale-llm", "aiscale:llm:0", "PENDING", ""});
  slurm_->AddJob({"21", "aiscale-llm", "aiscale:llm:0", "PENDING", ""});
  act_ = std::make_unique<SlurmActuator>(ref_, cfg_, slurm_, clock_, http_, 2);
  ASSERT_TRUE(act_->Start(false).ok());
  act_->WaitForStops();
  EXPECT_EQ(slurm_->Log("scancel"), (std::vector<std::string>{"scancel 21"}));  // pending: no TERM
  std::set<std::string> tags;
  for (const FakeJob& j : slurm_->Active()) tags.insert(j.comment);
  EXPECT_EQ(tags, (std::set<std::string>{"aiscale:llm:0", "aiscale:llm:1"}));
}

TEST_F(SlurmActuatorTest, HttpReadinessAndEndpointsUseTheNodeAddress) {
  cfg_.base_port = 18100;
  cfg_.readiness.kind = LocalReadiness::Kind::kHttp;
  cfg_.readiness.http_path = "/health";
  ASSERT_TRUE(Start(2, 2).ok());
  Settle();
  ScaleState s = Observe();
  EXPECT_EQ(s.ready, 0);
  EXPECT_NE(s.detail.find("replica 0 (job 100 on node1) not ready yet"), std::string::npos)
      << s.detail;
  http_.Ready("http://10.0.0.2:18101/health");
  ASSERT_TRUE(act_->Sync().ok());
  EXPECT_EQ(Observe().ready, 1);
  Result<std::vector<ReplicaEndpoint>> eps = act_->Endpoints(ref_);
  ASSERT_TRUE(eps.ok());
  ASSERT_EQ(eps->size(), 2u);
  EXPECT_EQ((*eps)[1].instance, "llm-1");
  EXPECT_EQ((*eps)[1].host, "10.0.0.2");
  EXPECT_EQ((*eps)[1].port, 18101);
  EXPECT_TRUE((*eps)[1].ready);
  EXPECT_FALSE((*eps)[0].ready);
}

TEST_F(SlurmActuatorTest, TextFormatsWhenJsonIsNotSupported) {
  slurm_ = std::make_shared<FakeSlurm>(1);
  slurm_->SetJsonSupported(false);
  cfg_.slurm_conf = "/etc/slurm/test.conf";
  act_ = std::make_unique<SlurmActuator>(ref_, cfg_, slurm_, clock_, http_, 2);
  ASSERT_TRUE(act_->Start(false).ok());
  Settle();
  ScaleState s = Observe();
  EXPECT_EQ(s.current, 2);
  EXPECT_EQ(s.ready, 1);
  EXPECT_EQ(s.max_available, 1);
  EXPECT_EQ(slurm_->Env("SLURM_CONF"), "/etc/slurm/test.conf");
}

TEST_F(SlurmActuatorTest, StartupErrors) {
  cfg_.script = (dir_ / "missing.sbatch").string();
  Status st = Start(1, 1);
  EXPECT_TRUE(st.IsNotFound()) << st.message();
  EXPECT_NE(st.message().find("missing.sbatch"), std::string::npos);

  st = CheckSlurmCommands(dir_.string());
  EXPECT_TRUE(st.IsNotFound()) << st.message();
  EXPECT_NE(st.message().find("needs the Slurm command squeue on PATH"), std::string::npos)
      << st.message();
}

// Torchrun mode (one job per agent): replica 0 hosts the rendezvous store, so its script says
// is_host=1 and a scale-down takes every other replica first, even a running one over a
// pending host.
TEST_F(SlurmActuatorTest, TorchrunModeRendersTheHostFlagAndKeepsTheHost) {
  std::ofstream(cfg_.script) << "#!/bin/bash\nexec agent --rdzv_conf=is_host={rdzv_is_host}\n";
  cfg_.rendezvous_host_replica = 0;
  ASSERT_TRUE(Start(3, 3).ok());
  Settle();
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    std::ifstream rendered(cfg_.run_dir + "/llm-" + std::to_string(i) + ".sbatch");
    std::string text((std::istreambuf_iterator<char>(rendered)), {});
    EXPECT_NE(text.find(i == 0 ? "is_host=1" : "is_host=0"), std::string::npos) << text;
  }
  std::string host_job;
  for (const FakeJob& j : slurm_->Active()) {
    if (j.comment == "aiscale:llm:0") host_job = j.id;
  }
  slurm_->End(host_job);
  ASSERT_TRUE(act_->Sync().ok());  // the host is resubmitted and pending
  ASSERT_TRUE(act_->Apply(ref_, 1).ok());
  act_->WaitForStops();
  const std::vector<FakeJob> left = slurm_->Active();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].comment, "aiscale:llm:0");
  EXPECT_EQ(left[0].state, "PENDING");
}

// A torchrun job that finished (its agents' batch jobs COMPLETED, exit 0) is completed: nothing
// is resubmitted, in the JSON and the text formats; with restart_policy Always (a service) a
// job that ended is resubmitted as before.
TEST_F(SlurmActuatorTest, CompletedJobIsTheWorkloadsSuccessUnderOnFailure) {
  struct Case {
    std::string name;
    RestartPolicy policy;
    bool json;
    bool completed;
  };
  const std::vector<Case> cases = {
      {"OnFailure, JSON", RestartPolicy::kOnFailure, true, true},
      {"OnFailure, text", RestartPolicy::kOnFailure, false, true},
      {"Always: resubmitted", RestartPolicy::kAlways, true, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    cfg_.rendezvous_host_replica = 0;
    cfg_.restart_policy = c.policy;
    if (act_) act_->Shutdown();
    slurm_ = std::make_shared<FakeSlurm>(3);
    slurm_->SetJsonSupported(c.json);
    // A COMPLETED job of an earlier run, still listed: not this run's success.
    slurm_->AddJob({"90", "aiscale-llm", "aiscale:llm:0", "COMPLETED", ""});
    act_ = std::make_unique<SlurmActuator>(ref_, cfg_, slurm_, clock_, http_, 2);
    ASSERT_TRUE(act_->Start(/*poll=*/false).ok());
    Settle();
    EXPECT_FALSE(Observe().completed);
    ASSERT_EQ(slurm_->Active().size(), 2u);
    const std::vector<FakeJob> jobs = slurm_->Active();
    slurm_->Complete(jobs[1].id);  // one agent finished first
    ASSERT_TRUE(act_->Sync().ok());
    if (c.completed) {
      EXPECT_TRUE(Observe().completed);
      EXPECT_EQ(Observe().ready, 1);  // the other is left to finish
    }
    slurm_->Complete(jobs[0].id);
    Settle();
    Settle();
    const ScaleState s = Observe();
    EXPECT_EQ(s.completed, c.completed) << s.detail;
    if (c.completed) {
      EXPECT_EQ(s.ready, 0);
      EXPECT_EQ(slurm_->Log("sbatch").size(), 2u);
      EXPECT_EQ(s.current, 2);
      EXPECT_NE(s.detail.find("COMPLETED (exit 0): the job finished"), std::string::npos)
          << s.detail;
      // Asked to grow after it finished: still nothing submitted.
      ASSERT_TRUE(act_->Apply(ref_, 3).ok());
      EXPECT_EQ(slurm_->Log("sbatch").size(), 2u);
    } else {
      EXPECT_EQ(slurm_->Log("sbatch").size(), 4u);
      EXPECT_EQ(s.ready, 2);
    }
  }
}

TEST_F(SlurmActuatorTest, HostFlagWithoutAHostReplicaIsInvalid) {
  std::ofstream(cfg_.script) << "#!/bin/bash\nexec agent --rdzv_conf=is_host={rdzv_is_host}\n";
  Status st = Start(1, 1);
  EXPECT_TRUE(st.IsInvalid()) << st.message();
  EXPECT_NE(st.message().find("uses {rdzv_is_host} but rendezvous_host_replica is not set"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(slurm_->Log("sbatch").empty());
}

TEST_F(SlurmActuatorTest, RejectsOtherWorkloadsAndNegativeCounts) {
  ASSERT_TRUE(Start(1, 0).ok());
  EXPECT_TRUE(act_->Apply(ref_, -1).IsInvalid());
  EXPECT_TRUE(act_->Observe({"x", "", "other"}).status().IsNotFound());
  EXPECT_TRUE(act_->Apply({"x", "", "other"}, 1).IsNotFound());
  EXPECT_EQ(Observe().current, 0);
  EXPECT_TRUE(slurm_->Log("sbatch").empty());
}

}  // namespace
}  // namespace aiscale::act
