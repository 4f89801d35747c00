// Pki: a throwaway CA and a server certificate for 127.0.0.1 signed by it, made with the openssl
// command line in a temp directory (removed with the object), so the cli tests can serve
// FakeKubeApiServer over HTTPS as a cluster does. Make() is false when openssl is missing or
// fails; callers then serve plain HTTP or skip. Not thread-safe.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace aiscale::cli {

class Pki {
 public:
  explicit Pki(const std::string& prefix = "aiscale_pki")
      : dir_(std::filesystem::path(::testing::TempDir()) /
             (prefix + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~Pki() { std::filesystem::remove_all(dir_); }
  Pki(const Pki&) = delete;
  Pki& operator=(const Pki&) = delete;

  // ca.pem/ca.key, and server.pem/server.key for IP 127.0.0.1 signed by that CA.
  bool Make() {
    const std::string d = dir_.string();
    std::ofstream(d + "/server.cnf") << "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n";
    return MakeCa("ca") &&
           Run("openssl req" + Key() + " -keyout " + d + "/server.key -out " + d +
               "/server.csr -subj '/CN=kube-apiserver'") &&
           Run("openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d +
               "/ca.key -CAcreateserial -out " + d + "/server.pem -days 2 -extfile " + d +
               "/server.cnf");
  }
  // Another self-signed CA, <name>.pem, that signed nothing here (a CA that does not match).
  bool MakeCa(const std::string& name) {
    const std::string d = dir_.string();
    return Run("openssl req -x509" + Key() + " -keyout " + d + "/" + name + ".key -out " + d + "/" +
               name + ".pem -days 2 -subj '/CN=kubernetes'");
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  static std::string Key() { return " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"; }
  static bool Run(const std::string& cmd) {
    return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
  }
  std::filesystem::path dir_;
};

}  // namespace aiscale::cli
