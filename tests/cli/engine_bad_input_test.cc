// Issue 8's bad input, end to end: the built `aiscale run` against a Kubernetes workload (with
// and without leader election) and a Slurm workload whose inputs are broken one at a time.
// Each row asserts a clear error naming the file or field (at startup: exit status 1 and the
// message; mid-run: in the stored Decisions or the daemon's log), no crash (an exit status, not
// a signal; a daemon still up when stopped) and no scale-down (the Deployment stays at 3, no
// PATCH below it, no Slurm job cancelled).
//
// The API server is FakeKubeApiServer (tests/fakes) over HTTPS with a CA made by openssl: Debian
// ships no kube-apiserver, so the fake serves the real wire format (Scale, Deployment, Lease,
// Status bodies). Slurm is three shell scripts on a PATH of their own (no slurmctld runs here),
// answering squeue/sinfo --json in the 22.05 shapes; sbatch is Debian's real one when it is
// installed (it checks a script before it contacts slurmctld), else a script printing what the
// real one prints. The unit tests in tests/act cover each loader's messages; these rows cover
// the path from the config through startup and the tick loop.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "cli/test_pki.h"
#include "core/decision.h"
#include "fakes/fake_kube_apiserver.h"
#include "store/sqlite_store.h"

extern char** environ;

namespace aiscale::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kToken = "token-aiscale-0001";
constexpr const char* kLeaseToken = "token-lease-0002";
constexpr int kReplicas = 3;  // the Deployment's size, and the static policy's

// One `aiscale run -c CONFIG --verbose`, spawned with PATH replaced when asked, output to a log.
// The destructor kills it by PID if it still runs.
class AiscaleRun {
 public:
  AiscaleRun(const fs::path& config, const fs::path& log, const std::string& path_env = "") {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      if (path_env.empty() || std::string(*e).rfind("PATH=", 0) != 0) env.emplace_back(*e);
    }
    if (!path_env.empty()) env.push_back("PATH=" + path_env);
    std::vector<std::string> args = {AISCALE_BINARY, "run", "-c", config.string(), "--verbose"};
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    for (auto& e : env) envp.push_back(e.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~AiscaleRun() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == 0) return true;
    pid_ = 0;
    exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  // The exit status; 128+N after signal N; -1 when it did not end within `limit_s` (killed).
  int Wait(double limit_s) {
    if (!WaitFor([&] { return !Running(); }, limit_s)) return -1;
    return exit_;
  }
  void Signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }

 private:
  pid_t pid_ = 0;
  int exit_ = -1;
};

// The files of one row: kubeconfigs, the controller config, the store and the log.
struct Files {
  fs::path dir;
  std::string target_kubeconfig, lease_kubeconfig;  // contents; "" leaves the file absent
  std::string target_context, lease_context;        // auth.context when set
  std::string target_resource;                      // `resource:` in place of kind Deployment
  bool leader = false;                              // spec.leader_election on
  fs::path Path(const std::string& name) const { return dir / name; }
};

std::string Kubeconfig(const std::string& server, const std::string& ca, const std::string& user) {
  return "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: " +
         server + "\n    certificate-authority: " + ca + "\nusers:\n- name: u\n  user:\n" + user +
         "contexts:\n- name: fake\n  context: {cluster: fake, user: u}\ncurrent-context: fake\n";
}

std::string Auth(const std::string& kubeconfig, const std::string& context) {
  return "{kubeconfig: " + kubeconfig + (context.empty() ? "" : ", context: " + context) + "}";
}

std::string ControllerConfig(const Files& f) {
  std::string text =
      "apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\nspec:\n"
      "  period: 0.5s\n"
      "  store: {path: " +
      f.Path("store.db").string() + ", heartbeat: 0}\n  server: {port: 0}\n";
  if (f.leader) {
    text += "  leader_election: {namespace: ai, name: aiscale, identity: t, lease_duration: 3s, " +
            std::string("renew_deadline: 2s, retry_period: 0.5s, auth: ") +
            Auth("lease.kubeconfig", f.lease_context) + "}\n";
  }
  // One Deployment at kReplicas held there by a static policy: any PATCH below it is a
  // scale-down that bad input caused.
  text +=
      "  workloads:\n    - {name: llm, kind: Deployment, namespace: ai, min_replicas: 1, " +
      std::string("max_replicas: 4, policy: {name: static, replicas: ") +
      std::to_string(kReplicas) + "},\n       target: {engine: kubernetes, " +
      (f.target_resource.empty() ? "kind: Deployment" : f.target_resource) +
      ", timeout: 2s, attempt_timeout: 1s, auth: " + Auth("target.kubeconfig", f.target_context) +
      "}}\n";
  return text;
}

std::vector<std::string> DecisionTexts(const fs::path& store, const std::string& workload) {
  std::vector<std::string> out;
  auto s = store::SqliteStore::Open(store.string());
  if (!s.ok()) return out;
  auto r = (*s)->Recent(workload, 500);
  if (!r.ok()) return out;
  for (const Decision& d : *r) out.push_back(ToJson(d).dump());
  return out;
}

bool AnyContains(const std::vector<std::string>& texts, const std::string& want) {
  for (const std::string& t : texts) {
    if (t.find(want) != std::string::npos) return true;
  }
  return false;
}

class EngineBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = std::make_unique<Pki>("aiscale_bad_input_pki");
    if (!pki_->Make() || !pki_->MakeCa("other")) GTEST_SKIP() << "openssl failed or is missing";
    testing::FakeKubeApiServer::Options opts;
    opts.cert_file = pki_->Path("server.pem");
    opts.key_file = pki_->Path("server.key");
    opts.token = kToken;
    server_ = std::make_unique<testing::FakeKubeApiServer>(opts);
    ASSERT_TRUE(server_->Start());
    server_->AddToken(kLeaseToken, "lease");
    server_->AddDeployment("ai", "llm", kReplicas, kReplicas);
  }

  // Good files for a row: both kubeconfigs valid, the target's token from a tokenFile.
  Files GoodFiles(const std::string& row) const {
    Files f;
    f.dir = fs::path(::testing::TempDir()) /
            ("aiscale_bad_input_" + row + "_" + std::to_string(::getpid()));
    fs::remove_all(f.dir);
    fs::create_directories(f.dir);
    std::ofstream(f.Path("token")) << kToken << "\n";
    f.target_kubeconfig =
        Kubeconfig(server_->Url(), pki_->Path("ca.pem"), "    tokenFile: token\n");
    f.lease_kubeconfig =
        Kubeconfig(server_->Url(), pki_->Path("ca.pem"), "    tokenFile: lease-token\n");
    std::ofstream(f.Path("lease-token")) << kLeaseToken << "\n";
    return f;
  }
  static std::string Write(const Files& f) {
    if (!f.target_kubeconfig.empty())
      std::ofstream(f.Path("target.kubeconfig")) << f.target_kubeconfig;
    if (!f.lease_kubeconfig.empty())
      std::ofstream(f.Path("lease.kubeconfig")) << f.lease_kubeconfig;
    const std::string cfg = f.Path("aiscale.yaml").string();
    std::ofstream(cfg) << ControllerConfig(f);
    return cfg;
  }
  // No PATCH of the Deployment's /scale went below its size, and it still has it.
  void ExpectNoScaleDown() const {
    for (const auto& r : server_->Requests()) {
      if (r.method != "PATCH") continue;
      const json body = json::parse(r.body, nullptr, false);
      ASSERT_TRUE(body.is_object()) << r.body;
      EXPECT_GE(body.value("/spec/replicas"_json_pointer, kReplicas), kReplicas) << r.body;
    }
    const json d = server_->Object("apps", "deployments", "ai", "llm");
    EXPECT_EQ(d.value("/spec/replicas"_json_pointer, -1), kReplicas);
  }

  std::unique_ptr<Pki> pki_;
  std::unique_ptr<testing::FakeKubeApiServer> server_;
};

// Rows whose input is broken before the daemon starts and that it must refuse at startup.
TEST_F(EngineBadInput, KubeconfigErrorsStopTheDaemonAtStartupNamingTheFile) {
  struct Case {
    const char* name;
    std::function<void(Files&)> breaks;
    std::vector<std::string> want;  // each in the log; {dir} is the row's directory
  };
  const std::string absent = "No such file";
  const std::vector<Case> cases = {
      {"target kubeconfig missing",
       [](Files& f) { f.target_kubeconfig.clear(); },
       {"kubernetes target of ai/llm", "{dir}/target.kubeconfig", absent}},
      {"lease kubeconfig missing",
       [](Files& f) {
         f.leader = true;
         f.lease_kubeconfig.clear();
       },
       {"leader election", "{dir}/lease.kubeconfig", absent}},
      {"target kubeconfig malformed",
       [](Files& f) { f.target_kubeconfig = "clusters: [\n  - name: x\n  token: {\n"; },
       {"kubernetes target of ai/llm", "unable to parse kubeconfig {dir}/target.kubeconfig",
        "YAML error at line"}},
      {"lease kubeconfig malformed",
       [](Files& f) {
         f.leader = true;
         f.lease_kubeconfig = "users:\n- name: u\n  user: {token: x\n";
       },
       {"leader election", "unable to parse kubeconfig {dir}/lease.kubeconfig",
        "YAML error at line"}},
      {"target context that does not exist",
       [](Files& f) { f.target_context = "prod"; },
       {"kubernetes target of ai/llm", "kubeconfig {dir}/target.kubeconfig",
        "context 'prod' is not in contexts"}},
      {"lease context that does not exist",
       [](Files& f) {
         f.leader = true;
         f.lease_context = "prod";
       },
       {"leader election", "kubeconfig {dir}/lease.kubeconfig",
        "context 'prod' is not in contexts"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Files f = GoodFiles("start" + std::to_string(&c - cases.data()));
    c.breaks(f);
    server_->ClearRequests();
    AiscaleRun run(Write(f), f.Path("aiscale.log"));
    EXPECT_EQ(run.Wait(30), 1) << ReadText(f.Path("aiscale.log"));
    const std::string log = ReadText(f.Path("aiscale.log"));
    for (std::string want : c.want) {
      if (const size_t at = want.find("{dir}"); at != std::string::npos) {
        want.replace(at, 5, f.dir.string());
      }
      EXPECT_NE(log.find(want), std::string::npos) << "want: " << want << "\nlog:\n" << log;
    }
    EXPECT_EQ(log.find(kToken), std::string::npos) << log;
    EXPECT_TRUE(server_->Requests().empty());  // refused before a single API call
    ExpectNoScaleDown();
    fs::remove_all(f.dir);
  }
}

// Rows that only show once the daemon talks to the API server: it keeps running, says why in
// its Decisions (or, for the Lease, in its log), and changes nothing.
TEST_F(EngineBadInput, ApiErrorsMidRunAreInTheDecisionsAndNeverScaleDown) {
  struct Case {
    const char* name;
    std::function<void(Files&)> breaks;  // before the start
    // After the daemon is up (and leading, with leader election on); null: nothing.
    std::function<void(testing::FakeKubeApiServer&, const Files&)> then;
    std::string in_decisions;  // in some Decision of ai/llm; "" when not checked there
    std::string in_log;        // in the daemon's log; "" when not checked there
  };
  auto vanish = [](const std::string& file, const std::string& token) {
    return [file, token](testing::FakeKubeApiServer& server, const Files& f) {
      fs::remove(f.Path(file));
      server.SetToken(token);  // the API server no longer takes the old token
    };
  };
  const std::vector<Case> cases = {
      {"target CA that does not match",
       [this](Files& f) {
         f.target_kubeconfig =
             Kubeconfig(server_->Url(), pki_->Path("other.pem"), "    tokenFile: token\n");
       },
       nullptr, "unable to GET /apis/apps/v1/namespaces/ai/deployments/llm/scale", ""},
      {"lease CA that does not match",
       [this](Files& f) {
         f.leader = true;
         f.lease_kubeconfig =
             Kubeconfig(server_->Url(), pki_->Path("other.pem"), "    tokenFile: lease-token\n");
       },
       nullptr,
       "not leader (leader: none): unable to GET "
       "/apis/coordination.k8s.io/v1/namespaces/ai/leases/aiscale",
       "aiscale: leader election: unable to GET"},
      {"target token file vanishes", nullptr, vanish("token", "token-rotated-0003"),
       "token file {dir}/token is unreadable", ""},
      {"lease token file vanishes", [](Files& f) { f.leader = true; },
       [](testing::FakeKubeApiServer& server, const Files& f) {
         fs::remove(f.Path("lease-token"));
         server.AddToken(kLeaseToken, "");  // "" : no longer a known user
         server.SetToken(kToken);
       },
       "", "token file {dir}/lease-token is unreadable"},
      {"target without a scale subresource",
       [](Files& f) { f.target_resource = "resource: batch/v1/jobs, ready_path: ready"; }, nullptr,
       // The fake has no Job, so it says `jobs.batch "llm" not found`; a real API server says
       // "the server could not find the requested resource" for a Job's /scale. Either way the
       // Decision names the path and the 404.
       "unable to GET /apis/batch/v1/namespaces/ai/jobs/llm/scale: HTTP 404: ", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Files f = GoodFiles("mid" + std::to_string(&c - cases.data()));
    if (c.breaks) c.breaks(f);
    server_->SetToken(kToken);
    server_->ClearRequests();
    AiscaleRun run(Write(f), f.Path("aiscale.log"));
    auto log = [&] { return ReadText(f.Path("aiscale.log")); };
    ASSERT_TRUE(WaitFor([&] { return log().find("serving /healthz") != std::string::npos; }, 20))
        << log();
    if (c.then) {
      if (f.leader) {
        ASSERT_TRUE(WaitFor([&] { return log().find("became leader") != std::string::npos; }, 10))
            << log();
      }
      ASSERT_TRUE(
          WaitFor([&] { return !DecisionTexts(f.Path("store.db"), "ai/llm").empty(); }, 10));
      c.then(*server_, f);
    }
    auto subst = [&](std::string s) {
      if (const size_t at = s.find("{dir}"); at != std::string::npos)
        s.replace(at, 5, f.dir.string());
      return s;
    };
    if (!c.in_decisions.empty()) {
      EXPECT_TRUE(WaitFor(
          [&] {
            return AnyContains(DecisionTexts(f.Path("store.db"), "ai/llm"), subst(c.in_decisions));
          },
          15))
          << "want in a decision: " << subst(c.in_decisions) << "\nlog:\n"
          << log();
    }
    if (!c.in_log.empty()) {
      EXPECT_TRUE(WaitFor([&] { return log().find(subst(c.in_log)) != std::string::npos; }, 15))
          << "want in the log: " << subst(c.in_log) << "\nlog:\n"
          << log();
    }
    EXPECT_TRUE(run.Running()) << log();
    run.Signal(SIGTERM);
    EXPECT_EQ(run.Wait(20), 0) << log();
    EXPECT_EQ(log().find(kToken), std::string::npos);
    EXPECT_EQ(log().find(kLeaseToken), std::string::npos);
    ExpectNoScaleDown();
    server_->SetToken(kToken);
    server_->AddToken(kLeaseToken, "lease");
    fs::remove_all(f.dir);
  }
}

// A Slurm "cluster" of scripts in DIR/bin: squeue and sinfo answer in the 22.05 JSON shapes (no
// jobs, one idle node), scancel records its calls in DIR/calls; sbatch is Debian's when
// installed (with a slurm.conf naming a controller that is not there: it rejects a bad script
// before it would connect), else a script printing the real one's words. No scontrol: aiscale
// never runs it, and these rows show it is not needed.
class SlurmBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("aiscale_slurm_bad_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    const std::string meta =
        R"("meta":{"plugin":{"type":"openapi/v0.0.38","name":"Slurm OpenAPI v0.0.38"},)"
        R"("Slurm":{"version":{"major":22,"micro":8,"minor":5},"release":"22.05.8"}},"errors":[])";
    Script("squeue", "printf '%s\\n' '{" + meta + R"(,"jobs":[]}')");
    Script("sinfo", "printf '%s\\n' '{" + meta +
                        R"(,"nodes":[{"name":"node1","address":"127.0.0.1","state":"idle",)"
                        R"("state_flags":[],"partitions":["gpu"]}]}')");
    Script("scancel", "echo \"scancel $*\" >>" + (dir_ / "calls").string());
    if (fs::exists("/usr/bin/sbatch")) {
      fs::create_symlink("/usr/bin/sbatch", dir_ / "bin" / "sbatch");
    } else {
      Script("sbatch",
             "echo 'sbatch: error: This does not look like a batch script.  The first' >&2\n"
             "echo 'sbatch: error: line must start with #! followed by the path to an "
             "interpreter.' >&2\necho 'sbatch: error: For instance: #!/bin/sh' >&2\nexit 1");
    }
    std::ofstream(dir_ / "slurm.conf")
        << "ClusterName=fake\nSlurmctldHost=localhost\nSlurmctldPort=1\nAuthType=auth/none\n"
           "CredType=cred/none\nNodeName=node1 CPUs=1 State=UNKNOWN\n"
           "PartitionName=gpu Nodes=node1 Default=YES\n";
    // A template without its #! line: sbatch refuses it.
    std::ofstream(dir_ / "serve.sbatch") << "srun python3 -m vllm.entrypoints.openai.api_server\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Script(const std::string& name, const std::string& body) {
    const fs::path p = dir_ / "bin" / name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(p, fs::perms::owner_all);
  }
  std::string Config(const std::string& script) const {
    return "apiVersion: aiscale.dev/v1alpha1\nkind: ControllerConfig\nspec:\n  period: 0.5s\n"
           "  store: {path: " +
           (dir_ / "store.db").string() +
           ", heartbeat: 0}\n  server: {port: 0}\n  workloads:\n    - name: train\n"
           "      kind: Deployment\n      min_replicas: 1\n      max_replicas: 2\n"
           "      policy: {name: static, replicas: 1}\n      target: {engine: slurm, script: " +
           script + ", slurm_conf: " + (dir_ / "slurm.conf").string() +
           ", run_dir: " + (dir_ / "run").string() + ", poll_interval: 0.5s}\n";
  }
  std::string Start(const std::string& script, std::unique_ptr<AiscaleRun>& run) const {
    const fs::path cfg = dir_ / "aiscale.yaml";
    std::ofstream(cfg) << Config(script);
    run = std::make_unique<AiscaleRun>(cfg, dir_ / "aiscale.log", (dir_ / "bin").string());
    return (dir_ / "aiscale.log").string();
  }

  fs::path dir_;
};

TEST_F(SlurmBadInput, StartupErrorsNameTheScriptOrTheCommand) {
  struct Case {
    const char* name;
    std::string script;
    std::string remove;  // a command taken off PATH
    std::string want;
  };
  const std::string serve = (dir_ / "serve.sbatch").string();
  const std::vector<Case> cases = {
      {"template that does not exist", (dir_ / "absent.sbatch").string(), "",
       "unable to start Slurm jobs of train: batch script: "},
      {"squeue missing from PATH", serve, "squeue",
       "unable to start train: the slurm engine needs the Slurm command squeue on PATH"},
      {"sinfo missing from PATH", serve, "sinfo",
       "unable to start train: the slurm engine needs the Slurm command sinfo on PATH"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (!c.remove.empty()) fs::rename(dir_ / "bin" / c.remove, dir_ / c.remove);
    std::unique_ptr<AiscaleRun> run;
    const std::string log_path = Start(c.script, run);
    EXPECT_EQ(run->Wait(30), 1);
    const std::string log = ReadText(log_path);
    EXPECT_NE(log.find(c.want), std::string::npos) << "want: " << c.want << "\nlog:\n" << log;
    if (c.remove.empty()) {
      EXPECT_NE(log.find(c.script), std::string::npos) << log;
    }
    if (!c.remove.empty()) fs::rename(dir_ / c.remove, dir_ / "bin" / c.remove);
    EXPECT_FALSE(fs::exists(dir_ / "calls"));  // nothing cancelled
  }
}

TEST_F(SlurmBadInput, ATemplateSbatchRejectsIsInTheDecisionsAndNothingIsCancelled) {
  std::unique_ptr<AiscaleRun> run;
  const std::string script = (dir_ / "serve.sbatch").string();
  const std::string log_path = Start(script, run);
  const std::string want = "sbatch failed for replica 0 (script " + script +
                           "): sbatch failed: sbatch: error: This does not look like a batch "
                           "script.  The first line must start with #! followed by the path to "
                           "an interpreter.";
  EXPECT_TRUE(
      WaitFor([&] { return AnyContains(DecisionTexts(dir_ / "store.db", "train"), want); }, 20))
      << "want: " << want << "\nlog:\n"
      << ReadText(log_path);
  EXPECT_TRUE(run->Running()) << ReadText(log_path);
  run->Signal(SIGTERM);
  EXPECT_EQ(run->Wait(20), 0) << ReadText(log_path);
  EXPECT_FALSE(fs::exists(dir_ / "calls"));  // nothing cancelled
}

}  // namespace
}  // namespace aiscale::cli
