// Kubernetes credentials: kubeconfig variants (token, tokenFile, client certificate, CA as data
// or file, insecure-skip-tls-verify with a warning) against the fake API server over HTTPS with a
// CA made by openssl at test time; the errors of a missing or malformed kubeconfig and an unknown
// context; in-cluster service accounts and token rotation; the default resolution order; and,
// when kubectl is installed, kubectl reading what the actuator wrote with the same kubeconfig.
#include "act/kubernetes_auth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "act/kubernetes_actuator.h"
#include "core/curl_http_client.h"
#include "core/system_clock.h"
#include "fakes/fake_kube_apiserver.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;
using testing::FakeKubeApiServer;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

std::string Base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -6;
  for (unsigned char c : in) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out.push_back(k[(val >> bits) & 0x3F]);
      bits -= 6;
    }
  }
  if (bits > -6) out.push_back(k[((val << 8) >> (bits + 8)) & 0x3F]);
  while (out.size() % 4) out.push_back('=');
  return out;
}

// A temporary directory with a CA, a server certificate for 127.0.0.1, a client certificate
// signed by the CA, and an unrelated CA, made by the openssl command line.
class Pki {
 public:
  Pki()
      : dir_(fs::temp_directory_path() /
             ("aiscale-kube-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::create_directories(dir_);
  }
  ~Pki() { fs::remove_all(dir_); }
  static bool HaveOpenssl() { return std::system("command -v openssl >/dev/null 2>&1") == 0; }
  bool Make() {
    const std::string d = dir_.string();
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    auto sign = [&](const std::string& name, const std::string& ext) {
      // Written here: a shell redirection would be undone by Run's own ">/dev/null".
      std::ofstream(d + "/" + name + ".cnf") << ext;
      return Run("openssl x509 -req -in " + d + "/" + name + ".csr -CA " + d + "/ca.pem -CAkey " +
                 d + "/ca.key -CAcreateserial -out " + d + "/" + name + ".pem -days 2 -extfile " +
                 d + "/" + name + ".cnf");
    };
    return Run("openssl req -x509" + key + " -keyout " + d + "/ca.key -out " + d +
               "/ca.pem -days 2 -subj '/CN=kubernetes'") &&
           Run("openssl req -x509" + key + " -keyout " + d + "/other.key -out " + d +
               "/other.pem -days 2 -subj '/CN=unrelated CA'") &&
           Run("openssl req" + key + " -keyout " + d + "/server.key -out " + d +
               "/server.csr -subj '/CN=kube-apiserver'") &&
           sign("server",
                "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n") &&
           Run("openssl req" + key + " -keyout " + d + "/client.key -out " + d +
               "/client.csr -subj '/O=system:masters/CN=aiscale'") &&
           sign("client", "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n");
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string dir() const { return dir_.string(); }

 private:
  static bool Run(const std::string& cmd) {
    return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
  }
  static inline std::atomic<int> counter_{0};
  fs::path dir_;
};

std::string Kubeconfig(const std::string& server, const std::string& cluster_extra,
                       const std::string& user_extra) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
         "clusters:\n- name: fake\n  cluster:\n    server: " +
         server + "\n" + cluster_extra +
         "contexts:\n- name: test\n  context: {cluster: fake, user: aiscale, namespace: ai}\n"
         "- name: other\n  context: {cluster: elsewhere, user: aiscale}\n"
         "users:\n- name: aiscale\n  user:\n" +
         user_extra;
}

KubeAuthEnv TestEnv(std::map<std::string, std::string> vars, std::vector<std::string>* warnings) {
  KubeAuthEnv env;
  env.getenv = [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  env.warn = [warnings](const std::string& w) {
    if (warnings) warnings->push_back(w);
  };
  return env;
}

// Observes ai/llm through `ep`: whether the TLS and credentials of the endpoint work.
Result<ScaleState> ObserveThrough(const KubeEndpoint& ep) {
  static CurlHttpClient http;
  static SystemClock clock;
  KubernetesTargetConfig cfg;
  ResourceForKind("Deployment", cfg.resource);
  cfg.namespace_ = "ai";
  cfg.name = "llm";
  KubeClientOptions opts;
  // Short: a TLS failure is retried like any transport error until the deadline.
  opts.call_timeout = Seconds(1);
  opts.attempt_timeout = Seconds(1);
  opts.backoff_initial = Seconds(0.01);
  KubernetesActuator a(cfg, std::make_unique<KubeClient>(ep, http, clock, opts), clock, nullptr);
  return a.Observe({"Deployment", "ai", "llm"});
}

class KubeconfigTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Pki::HaveOpenssl()) GTEST_SKIP() << "openssl is not on PATH; TLS tests skipped";
    ASSERT_TRUE(pki_.Make()) << "openssl failed to make the test certificates";
  }
  std::unique_ptr<FakeKubeApiServer> Server(bool client_certs) {
    FakeKubeApiServer::Options o;
    o.cert_file = pki_.Path("server.pem");
    o.key_file = pki_.Path("server.key");
    if (client_certs) o.client_ca_file = pki_.Path("ca.pem");
    o.token = "s3cr3t-token";
    auto s = std::make_unique<FakeKubeApiServer>(o);
    EXPECT_TRUE(s->Start());
    s->AddDeployment("ai", "llm", 3, 2);
    return s;
  }
  Pki pki_;
};

TEST_F(KubeconfigTlsTest, EachCredentialKindReachesTheServer) {
  auto token_server = Server(false);
  auto cert_server = Server(true);
  WriteAll(pki_.Path("token"), "s3cr3t-token\n");
  const std::string ca_data = Base64(ReadAll(pki_.Path("ca.pem")));
  struct Case {
    std::string name;
    bool certs;  // the server that wants client certificates
    std::string cluster;
    std::string user;
    bool ok;
    bool warns;
  };
  const std::vector<Case> cases = {
      {"token, CA file (relative)", false, "    certificate-authority: ca.pem\n",
       "    token: s3cr3t-token\n", true, false},
      {"token, CA data", false, "    certificate-authority-data: " + ca_data + "\n",
       "    token: s3cr3t-token\n", true, false},
      {"tokenFile", false, "    certificate-authority: ca.pem\n", "    tokenFile: token\n", true,
       false},
      {"client certificate files", true, "    certificate-authority: ca.pem\n",
       "    client-certificate: client.pem\n    client-key: client.key\n", true, false},
      {"client certificate data", true, "    certificate-authority-data: " + ca_data + "\n",
       "    client-certificate-data: " + Base64(ReadAll(pki_.Path("client.pem"))) +
           "\n    client-key-data: " + Base64(ReadAll(pki_.Path("client.key"))) + "\n",
       true, false},
      {"the wrong CA fails", false, "    certificate-authority: other.pem\n",
       "    token: s3cr3t-token\n", false, false},
      {"no CA: system CAs, fails", false, "", "    token: s3cr3t-token\n", false, false},
      {"insecure-skip-tls-verify, warned", false, "    insecure-skip-tls-verify: true\n",
       "    token: s3cr3t-token\n", true, true},
      {"no client certificate fails", true, "    certificate-authority: ca.pem\n",
       "    token: s3cr3t-token\n", false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string server = c.certs ? cert_server->Url() : token_server->Url();
    WriteAll(pki_.Path("kubeconfig"), Kubeconfig(server, c.cluster, c.user));
    std::vector<std::string> warnings;
    Result<KubeEndpoint> ep = LoadKubeconfig(pki_.Path("kubeconfig"), "", TestEnv({}, &warnings));
    ASSERT_TRUE(ep.ok()) << ep.status().message();
    EXPECT_EQ(ep->server, server);
    Result<ScaleState> s = ObserveThrough(*ep);
    EXPECT_EQ(s.ok(), c.ok) << (s.ok() ? "unexpectedly reached the server" : s.status().message());
    if (s.ok()) {
      EXPECT_EQ(s->current, 3);
      EXPECT_EQ(s->ready, 2);
    } else {
      EXPECT_EQ(s.status().message().find("s3cr3t"), std::string::npos) << s.status().message();
      if (std::string(c.name).find("CA") != std::string::npos) {  // not retried to the deadline
        EXPECT_TRUE(s.status().IsPermissionDenied()) << s.status().message();
      }
    }
    ASSERT_EQ(warnings.size(), c.warns ? 1u : 0u);
    if (c.warns) {
      EXPECT_NE(warnings[0].find("NOT verified"), std::string::npos) << warnings[0];
    }
  }
}

TEST_F(KubeconfigTlsTest, InClusterTokenIsReReadWhenRotated) {
  auto server = Server(false);
  const std::string sa = pki_.Path("sa");
  fs::create_directories(sa);
  fs::copy_file(pki_.Path("ca.pem"), sa + "/ca.crt");
  WriteAll(sa + "/token", "s3cr3t-token");
  const std::string url = server->Url();
  const std::string port = url.substr(url.rfind(':') + 1);
  KubeAuthEnv env = TestEnv(
      {{"KUBERNETES_SERVICE_HOST", "127.0.0.1"}, {"KUBERNETES_SERVICE_PORT", port}}, nullptr);
  env.in_cluster.token_file = sa + "/token";
  env.in_cluster.ca_file = sa + "/ca.crt";
  Result<KubeEndpoint> ep = ResolveKubeEndpoint(KubeAuthConfig{}, env);  // default: in-cluster
  ASSERT_TRUE(ep.ok()) << ep.status().message();
  EXPECT_EQ(ep->server, url);
  EXPECT_EQ(ep->source, "in-cluster service account");

  CurlHttpClient http;
  SystemClock clock;
  KubeClientOptions opts;
  opts.call_timeout = Seconds(3);
  KubeClient client(*ep, http, clock, opts);
  const std::string path = "/apis/apps/v1/namespaces/ai/deployments/llm/scale";
  ASSERT_TRUE(client.Call("GET", path).ok());

  server->SetToken("rotated-token");  // the kubelet rotates: the old token stops working
  EXPECT_TRUE(client.Call("GET", path).status().IsPermissionDenied());
  WriteAll(sa + "/token.new", "rotated-token\n");
  fs::rename(sa + "/token.new", sa + "/token");  // atomically, as the kubelet's ..data swap
  Result<nlohmann::json> after = client.Call("GET", path);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ((*after)["spec"]["replicas"], 3);
}

TEST(Kubeconfig, ErrorsAreClearAndHoldNoSecret) {
  const fs::path dir = fs::temp_directory_path() / ("aiscale-kcfg-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string good_user = "    token: s3cr3t-token\n";
  struct Case {
    std::string name;
    std::string text;  // empty: no file
    std::string context;
    StatusCode code;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"missing file", "", "", StatusCode::kNotFound, "No such file"},
      {"malformed YAML", "clusters: [\n  - name: x\n  token: s3cr3t-token: {\n", "",
       StatusCode::kInvalid, "unable to parse kubeconfig"},
      {"not a map", "- a\n- b\n", "", StatusCode::kInvalid, "not a map"},
      {"unknown context", Kubeconfig("https://127.0.0.1:6443", "", good_user), "prod",
       StatusCode::kNotFound, "context 'prod' is not in contexts"},
      {"context's cluster missing", Kubeconfig("https://127.0.0.1:6443", "", good_user), "other",
       StatusCode::kInvalid, "cluster 'elsewhere' is not in clusters"},
      {"no current-context", "apiVersion: v1\nkind: Config\nclusters: []\n", "",
       StatusCode::kInvalid, "no context named and no current-context set"},
      {"server not a URL", Kubeconfig("127.0.0.1:6443", "", good_user), "", StatusCode::kInvalid,
       "server must be an http(s):// URL"},
      {"bad CA data",
       Kubeconfig("https://127.0.0.1:6443", "    certificate-authority-data: '%%%'\n", good_user),
       "", StatusCode::kInvalid, "certificate-authority-data is not valid base64"},
      {"missing CA file",
       Kubeconfig("https://127.0.0.1:6443", "    certificate-authority: nope.pem\n", good_user), "",
       StatusCode::kInvalid, "nope.pem does not exist"},
      {"CA file that is a device (a hang if handed to TLS)",
       Kubeconfig("https://127.0.0.1:6443", "    certificate-authority: /dev/zero\n", good_user),
       "", StatusCode::kInvalid, "certificate-authority: unable to read credential file /dev/zero"},
      {"exec plugin",
       Kubeconfig("https://127.0.0.1:6443", "", "    exec: {command: gke-gcloud-auth-plugin}\n"),
       "", StatusCode::kInvalid, "exec or auth-provider credentials"},
      {"certificate without key",
       Kubeconfig("https://127.0.0.1:6443", "",
                  "    client-certificate-data: " + Base64("s3cr3t-cert") + "\n"),
       "", StatusCode::kInvalid, "client certificate without its key"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = (dir / "config").string();
    fs::remove(path);
    if (!c.text.empty()) WriteAll(path, c.text);
    Result<KubeEndpoint> ep = LoadKubeconfig(path, c.context, TestEnv({}, nullptr));
    ASSERT_FALSE(ep.ok());
    EXPECT_EQ(ep.status().code(), c.code) << ep.status().message();
    EXPECT_NE(ep.status().message().find(c.want), std::string::npos) << ep.status().message();
    EXPECT_NE(ep.status().message().find(path), std::string::npos) << ep.status().message();
    EXPECT_EQ(ep.status().message().find("s3cr3t"), std::string::npos) << ep.status().message();
  }
  fs::remove_all(dir);
}

TEST(Kubeconfig, DefaultResolutionOrder) {
  const fs::path dir = fs::temp_directory_path() / ("aiscale-kres-" + std::to_string(::getpid()));
  fs::create_directories(dir / ".kube");
  WriteAll((dir / ".kube/config").string(),
           Kubeconfig("https://home.example:6443", "", "    token: t\n"));
  WriteAll((dir / "env-config").string(),
           Kubeconfig("https://env.example:6443", "", "    token: t\n"));
  struct Case {
    std::string name;
    std::map<std::string, std::string> vars;
    std::string want_server;  // empty: an error
  };
  const std::string home = dir.string();
  const std::vector<Case> cases = {
      {"HOME's ~/.kube/config", {{"HOME", home}}, "https://home.example:6443"},
      {"$KUBECONFIG",
       {{"HOME", home}, {"KUBECONFIG", home + "/env-config"}},
       "https://env.example:6443"},
      {"$KUBECONFIG list: the first that exists",
       {{"HOME", home}, {"KUBECONFIG", home + "/absent:" + home + "/env-config"}},
       "https://env.example:6443"},
      {"in a pod without its service account",
       {{"HOME", home},
        {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
        {"KUBERNETES_SERVICE_PORT", "443"}},
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    KubeAuthEnv env = TestEnv(c.vars, nullptr);
    env.in_cluster.token_file = home + "/no-token";
    Result<KubeEndpoint> ep = ResolveKubeEndpoint(KubeAuthConfig{}, env);
    if (c.want_server.empty()) {
      ASSERT_FALSE(ep.ok());
      EXPECT_NE(ep.status().message().find("no service account token at"), std::string::npos);
    } else {
      ASSERT_TRUE(ep.ok()) << ep.status().message();
      EXPECT_EQ(ep->server, c.want_server);
    }
  }
  fs::remove_all(dir);
}

TEST(KubeTokenSource, ReReadsTheFileOnlyWhenItChanges) {
  const std::string path =
      (fs::temp_directory_path() / ("aiscale-tok-" + std::to_string(::getpid()))).string();
  WriteAll(path, "one\n");
  KubeEndpoint ep;
  ep.token = "static";
  ep.token_file = path;
  KubeTokenSource src(ep);
  EXPECT_EQ(*src.Token(), "one");
  WriteAll(path + ".new", "second\n");
  fs::rename(path + ".new", path);
  EXPECT_EQ(*src.Token(), "second");
  fs::remove(path);  // mid-rotation: the last token stands
  EXPECT_EQ(*src.Token(), "second");

  KubeTokenSource fresh(ep);
  EXPECT_TRUE(fresh.Token().status().IsUnavailable());
  KubeEndpoint fixed;
  fixed.token = "static";
  KubeTokenSource constant(fixed);
  EXPECT_EQ(*constant.Token(), "static");
}

TEST(DecodeBase64, Table) {
  EXPECT_EQ(*DecodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(*DecodeBase64("aGVs\nbG8h"), "hello!");
  EXPECT_EQ(*DecodeBase64(""), "");
  EXPECT_FALSE(DecodeBase64("a$==").has_value());
  EXPECT_FALSE(DecodeBase64("aG=Vs").has_value());
  EXPECT_EQ(*DecodeBase64(Base64("any\x01\xff bytes")), "any\x01\xff bytes");
}

// kubectl, given the same kubeconfig, sees what the actuator wrote: the kubeconfig is one a real
// client accepts and the fake's /scale is what a real client reads.
TEST_F(KubeconfigTlsTest, KubectlReadsWhatTheActuatorWrote) {
  if (std::system("kubectl version --client >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "kubectl is not installed; cross-check skipped";
  }
  auto server = Server(false);
  const std::string kc = pki_.Path("kubeconfig");
  WriteAll(kc, Kubeconfig(
                   server->Url(),
                   "    certificate-authority-data: " + Base64(ReadAll(pki_.Path("ca.pem"))) + "\n",
                   "    token: s3cr3t-token\n"));
  Result<KubeEndpoint> ep = LoadKubeconfig(kc, "", TestEnv({}, nullptr));
  ASSERT_TRUE(ep.ok()) << ep.status().message();
  CurlHttpClient http;
  SystemClock clock;
  KubernetesTargetConfig cfg;
  ResourceForKind("Deployment", cfg.resource);
  cfg.namespace_ = "ai";
  cfg.name = "llm";
  KubernetesActuator a(cfg, std::make_unique<KubeClient>(*ep, http, clock, KubeClientOptions{}),
                       clock, nullptr);
  ASSERT_TRUE(a.Apply({"Deployment", "ai", "llm"}, 6).ok());

  const std::string cmd =
      "kubectl --kubeconfig " + kc + " --request-timeout=10s get --raw " + a.ScalePath() + " 2>&1";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    ASSERT_EQ(::pclose(p), 0) << out;
  }
  const nlohmann::json scale = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(scale.is_object()) << out;
  EXPECT_EQ(scale["kind"], "Scale");
  EXPECT_EQ(scale["spec"]["replicas"], 6);
  bool kubectl_sent_token = false;
  for (const auto& r : server->Requests()) {
    if (r.method == "GET" && r.authorized) kubectl_sent_token = true;
  }
  EXPECT_TRUE(kubectl_sent_token);
}

}  // namespace
}  // namespace aiscale::act
