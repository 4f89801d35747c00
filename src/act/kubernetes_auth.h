// Kubernetes credentials: where the API server is (KubeEndpoint) and the bearer token to send
// (KubeTokenSource), read from a kubeconfig or from the pod's service account.
//
// Promises: TLS is verified against the cluster's CA unless a kubeconfig sets
// insecure-skip-tls-verify, which is honoured with a warning; a service account token is
// re-read when the kubelet rotates it; no error message contains a token or key. Every path
// and the environment are injectable (KubeAuthEnv) so tests need no real cluster.
//
//   ASSIGN_OR_RETURN(KubeEndpoint ep, ResolveKubeEndpoint(cfg.auth, KubeAuthEnv::Process()));
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "act/kubernetes_target.h"
#include "core/http.h"
#include "core/result.h"

namespace aiscale::act {

struct KubeEndpoint {
  std::string server;      // "https://10.0.0.1:443", no trailing slash
  TlsOptions tls;          // CA and client certificate; insecure_skip_verify only when asked for
  std::string token;       // a static bearer token; empty: none
  std::string token_file;  // a token file re-read when it changes; wins over `token`
  std::string source;      // for messages: "kubeconfig /x (context prod)", "in-cluster"
};

// The service account files a pod gets; tests point these elsewhere.
struct InClusterPaths {
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
};

// What credential loading may read from the process: its environment, the in-cluster paths,
// and where warnings go. Process() is the real one; tests build their own.
struct KubeAuthEnv {
  std::function<std::optional<std::string>(const std::string&)> getenv;
  InClusterPaths in_cluster;
  std::function<void(const std::string&)> warn;  // one line, no secrets in it
  static KubeAuthEnv Process();
};

// A kubeconfig's cluster and user for `context` (empty: current-context). Relative file paths
// in it are resolved against the kubeconfig's directory, as kubectl does. Errors (kInvalid or
// kNotFound) name the file and the field, never a credential.
Result<KubeEndpoint> LoadKubeconfig(const std::string& path, const std::string& context,
                                    const KubeAuthEnv& env);
// The pod's service account: KUBERNETES_SERVICE_HOST/PORT, the mounted token and ca.crt.
Result<KubeEndpoint> LoadInCluster(const KubeAuthEnv& env);
// `auth` as configured; kDefault: in-cluster when KUBERNETES_SERVICE_HOST is set, else the
// first file in $KUBECONFIG, else ~/.kube/config.
Result<KubeEndpoint> ResolveKubeEndpoint(const KubeAuthConfig& auth, const KubeAuthEnv& env);

// The bearer token of an endpoint, re-read from its file whenever the file's modification time
// or size changes (the kubelet rotates projected tokens). Thread-safe.
class KubeTokenSource {
 public:
  explicit KubeTokenSource(const KubeEndpoint& ep) : token_(ep.token), file_(ep.token_file) {}
  // The token (empty when there is none); kUnavailable when the file cannot be read. When a
  // file read before vanishes (the kubelet swaps it while rotating), the token read last.
  Result<std::string> Token();
  // "" while the file reads; else what went wrong and that the last token stands in, for the
  // message of a call the API server refused (a vanished file is then the likely cause).
  std::string Problem();

 private:
  std::mutex mu_;
  std::string token_;
  std::string file_;
  bool loaded_ = false;  // the file was read once; mtime_ and size_ are its stamp then
  std::string problem_;  // why the last look at the file failed; "" when it did not
  std::filesystem::file_time_type mtime_{};
  std::uintmax_t size_ = 0;
};

// Standard base64 (kubeconfig's *-data fields); nullopt when malformed.
std::optional<std::string> DecodeBase64(const std::string& text);

}  // namespace aiscale::act
