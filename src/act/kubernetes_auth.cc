#include "act/kubernetes_auth.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

#include "core/bounded_file.h"

namespace aiscale::act {
namespace {

namespace fs = std::filesystem;

// Named as what they are in errors ("unable to read kubeconfig PATH: ...").
constexpr FileLimit kKubeconfigLimit{"kubeconfig", kSecretFileLimit.max_bytes, 0};
constexpr FileLimit kTokenFileLimit{"token file", kSecretFileLimit.max_bytes, 0};

std::string Trim(std::string s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  const size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string ExpandHome(const std::string& path, const KubeAuthEnv& env) {
  if (path.empty() || path[0] != '~') return path;
  const std::optional<std::string> home = env.getenv ? env.getenv("HOME") : std::nullopt;
  return home ? *home + path.substr(1) : path;
}

// A kubeconfig's named list entry (clusters, users, contexts): the map under `field`.
YAML::Node FindNamed(const YAML::Node& root, const std::string& list, const std::string& name,
                     const std::string& field) {
  const YAML::Node items = root[list];
  if (!items || !items.IsSequence()) return YAML::Node();
  for (const YAML::Node& item : items) {
    if (item.IsMap() && item["name"] && item["name"].as<std::string>("") == name) {
      return item[field];
    }
  }
  return YAML::Node();
}

std::string Str(const YAML::Node& map, const std::string& key) {
  if (!map || !map.IsMap() || !map[key] || !map[key].IsScalar()) return "";
  return map[key].as<std::string>("");
}

struct KubeconfigReader {
  std::string path;
  fs::path dir;
  const KubeAuthEnv& env;

  Status Error(const std::string& what) const {
    return Status::Invalid("unable to use kubeconfig " + path + ": " + what);
  }
  std::string Resolve(const std::string& p) const {
    if (p.empty() || fs::path(p).is_absolute()) return p;
    return (dir / p).lexically_normal().string();
  }
  // A *-data field (base64) into `pem`, or a file path field into `file`.
  Status Material(const YAML::Node& m, const std::string& where, const std::string& key,
                  std::string& pem, std::string& file) const {
    const std::string data = Str(m, key + "-data");
    if (!data.empty()) {
      std::optional<std::string> decoded = DecodeBase64(data);
      if (!decoded) return Error(where + "." + key + "-data is not valid base64");
      pem = *decoded;
      return Status::Ok();
    }
    file = Resolve(Str(m, key));
    if (file.empty()) return Status::Ok();
    if (!fs::exists(file)) return Error(where + "." + key + ": file " + file + " does not exist");
    // The TLS library opens it later: a FIFO or /dev/zero there must fail now, not hang then.
    Result<uint64_t> regular = CheckRegularFile(file, kSecretFileLimit);
    if (!regular.ok()) return Error(where + "." + key + ": " + regular.status().message());
    return Status::Ok();
  }
  Status Cluster(const YAML::Node& root, const std::string& name, KubeEndpoint& ep) const;
  Status User(const YAML::Node& root, const std::string& name, KubeEndpoint& ep) const;
};

Status KubeconfigReader::Cluster(const YAML::Node& root, const std::string& name,
                                 KubeEndpoint& ep) const {
  const YAML::Node c = FindNamed(root, "clusters", name, "cluster");
  const std::string where = "cluster '" + name + "'";
  if (!c || !c.IsMap()) return Error(where + " is not in clusters");
  ep.server = Str(c, "server");
  while (!ep.server.empty() && ep.server.back() == '/') ep.server.pop_back();
  if (ep.server.rfind("https://", 0) != 0 && ep.server.rfind("http://", 0) != 0) {
    return Error(where + ".server must be an http(s):// URL");
  }
  RETURN_IF_ERROR(Material(c, where, "certificate-authority", ep.tls.ca_pem, ep.tls.ca_file));
  if (c["insecure-skip-tls-verify"] && c["insecure-skip-tls-verify"].as<bool>(false)) {
    ep.tls.insecure_skip_verify = true;
    if (env.warn) {
      env.warn("kubeconfig " + path + ": " + where +
               " sets insecure-skip-tls-verify: the API server's certificate is NOT verified");
    }
  }
  return Status::Ok();
}

Status KubeconfigReader::User(const YAML::Node& root, const std::string& name,
                              KubeEndpoint& ep) const {
  const YAML::Node u = FindNamed(root, "users", name, "user");
  const std::string where = "user '" + name + "'";
  if (!u) return Error(where + " is not in users");
  if (!u.IsMap()) return Status::Ok();  // an anonymous user: `user: {}` or null
  if (u["exec"] || u["auth-provider"]) {
    return Error(where +
                 " uses exec or auth-provider credentials, which aiscale does not run; "
                 "give it a token, tokenFile or client certificate");
  }
  ep.token = Str(u, "token");
  ep.token_file = Resolve(Str(u, "tokenFile"));
  if (!ep.token_file.empty() && !fs::exists(ep.token_file)) {
    return Error(where + ".tokenFile: file " + ep.token_file + " does not exist");
  }
  RETURN_IF_ERROR(
      Material(u, where, "client-certificate", ep.tls.client_cert_pem, ep.tls.client_cert_file));
  RETURN_IF_ERROR(Material(u, where, "client-key", ep.tls.client_key_pem, ep.tls.client_key_file));
  const bool has_cert = !ep.tls.client_cert_pem.empty() || !ep.tls.client_cert_file.empty();
  const bool has_key = !ep.tls.client_key_pem.empty() || !ep.tls.client_key_file.empty();
  if (has_cert != has_key) return Error(where + " has a client certificate without its key");
  return Status::Ok();
}

}  // namespace

KubeAuthEnv KubeAuthEnv::Process() {
  KubeAuthEnv env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  env.warn = [](const std::string& line) { std::cerr << "aiscale: warning: " << line << "\n"; };
  return env;
}

std::optional<std::string> DecodeBase64(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  int bits = 0, acc = 0, pad = 0;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == ' ') continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    const int v = value(c);
    if (v < 0 || pad > 0) return std::nullopt;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (pad > 2 || bits >= 6) return std::nullopt;
  return out;
}

Result<KubeEndpoint> LoadKubeconfig(const std::string& raw_path, const std::string& context,
                                    const KubeAuthEnv& env) {
  const std::string path = ExpandHome(raw_path, env);
  Result<std::string> text = ReadBoundedFile(path, kKubeconfigLimit);
  if (!text.ok()) return text.status();
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    // The mark only: yaml-cpp's message may quote the line, which may hold a credential.
    return Status::Invalid("unable to parse kubeconfig " + path + ": YAML error at line " +
                           std::to_string(e.mark.line + 1) + ", column " +
                           std::to_string(e.mark.column + 1));
  }
  KubeconfigReader r{path, fs::path(path).parent_path(), env};
  if (!root.IsMap()) return r.Error("not a map (apiVersion: v1, kind: Config)");
  const std::string name = context.empty() ? Str(root, "current-context") : context;
  if (name.empty()) return r.Error("no context named and no current-context set");
  const YAML::Node ctx = FindNamed(root, "contexts", name, "context");
  if (!ctx || !ctx.IsMap())
    return Status::NotFound("unable to use kubeconfig " + path + ": context '" + name +
                            "' is not in contexts");
  KubeEndpoint ep;
  try {
    RETURN_IF_ERROR(r.Cluster(root, Str(ctx, "cluster"), ep));
    RETURN_IF_ERROR(r.User(root, Str(ctx, "user"), ep));
  } catch (const YAML::Exception& e) {
    return r.Error("malformed field near line " + std::to_string(e.mark.line + 1));
  }
  ep.source = "kubeconfig " + path + " (context " + name + ")";
  return ep;
}

Result<KubeEndpoint> LoadInCluster(const KubeAuthEnv& env) {
  const std::optional<std::string> host =
      env.getenv ? env.getenv("KUBERNETES_SERVICE_HOST") : std::nullopt;
  const std::optional<std::string> port =
      env.getenv ? env.getenv("KUBERNETES_SERVICE_PORT") : std::nullopt;
  if (!host || host->empty() || !port || port->empty()) {
    return Status::NotFound(
        "unable to use in-cluster credentials: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT must be set (aiscale is not running in a pod)");
  }
  const InClusterPaths& p = env.in_cluster;
  if (!fs::exists(p.token_file)) {
    return Status::NotFound("unable to use in-cluster credentials: no service account token at " +
                            p.token_file);
  }
  if (!fs::exists(p.ca_file)) {
    return Status::NotFound("unable to use in-cluster credentials: no CA at " + p.ca_file);
  }
  KubeEndpoint ep;
  const bool ipv6 = host->find(':') != std::string::npos;
  ep.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  ep.tls.ca_file = p.ca_file;
  ep.token_file = p.token_file;
  ep.source = "in-cluster service account";
  return ep;
}

Result<KubeEndpoint> ResolveKubeEndpoint(const KubeAuthConfig& auth, const KubeAuthEnv& env) {
  switch (auth.mode) {
    case KubeAuthConfig::Mode::kInCluster:
      return LoadInCluster(env);
    case KubeAuthConfig::Mode::kKubeconfig:
      return LoadKubeconfig(auth.kubeconfig, auth.context, env);
    case KubeAuthConfig::Mode::kDefault:
      break;
  }
  auto get = [&](const char* name) {
    return env.getenv ? env.getenv(name).value_or("") : std::string();
  };
  if (!get("KUBERNETES_SERVICE_HOST").empty() && auth.context.empty()) return LoadInCluster(env);
  // $KUBECONFIG may list several files; kubectl merges them, aiscale uses the first that exists.
  std::string list = get("KUBECONFIG");
  std::string first;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(':', start), list.size());
    const std::string one = list.substr(start, end - start);
    if (!one.empty() && first.empty()) first = one;
    if (!one.empty() && fs::exists(ExpandHome(one, env)))
      return LoadKubeconfig(one, auth.context, env);
    start = end + 1;
  }
  return LoadKubeconfig(first.empty() ? "~/.kube/config" : first, auth.context, env);
}

Result<std::string> KubeTokenSource::Token() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_.empty()) return token_;
  std::error_code ec;
  const auto mtime = fs::last_write_time(file_, ec);
  const std::uintmax_t size = ec ? 0 : fs::file_size(file_, ec);
  if (ec) {
    if (loaded_) {  // mid-rotation: the previous token is still valid for a while
      problem_ = "token file " + file_ + " is unreadable (" + ec.message() +
                 "); the token read from it before was sent";
      return token_;
    }
    return Status::Unavailable("unable to read token file " + file_ + ": " + ec.message());
  }
  problem_.clear();
  if (loaded_ && mtime == mtime_ && size == size_) return token_;
  Result<std::string> text = ReadBoundedFile(file_, kTokenFileLimit);
  if (!text.ok()) return Status::Unavailable(text.status().message());
  token_ = Trim(*text);
  mtime_ = mtime;
  size_ = size;
  loaded_ = true;
  return token_;
}

std::string KubeTokenSource::Problem() {
  std::lock_guard<std::mutex> lock(mu_);
  return problem_;
}

}  // namespace aiscale::act
