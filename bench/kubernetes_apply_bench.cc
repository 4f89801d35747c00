// Kubernetes actuator against the wire-level fake API server (issue 8's figures): from a decision
// to the PATCH on /scale acknowledged, median and p99, over HTTPS with a bearer token and a
// self-signed CA (made by the openssl command line), through the real KubeClient over
// CurlHttpClient; and the API calls per tick per workload (one Observe + one Apply), which must
// not grow with the cluster (no list of pods per tick unless gpu_capacity is asked for).
//
// The server is a fake (tests/fakes/fake_kube_apiserver.h: Debian ships no kube-apiserver), so
// the latency is aiscale's own side plus a local HTTPS round trip, not a real API server's
// admission and etcd write. Not a Google Benchmark program: each sample is one real rescale.
//   ./build/kubernetes_apply_bench [--rescales 200]
// Exit status: 0 when it ran, 2 on bad arguments or set-up failure.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "act/kubernetes_actuator.h"
#include "core/curl_http_client.h"
#include "core/system_clock.h"
#include "fakes/fake_kube_apiserver.h"

namespace {

namespace fs = std::filesystem;
using aiscale::act::KubernetesActuator;
using aiscale::testing::FakeKubeApiServer;

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

// A self-signed server certificate for 127.0.0.1, which the client then trusts as its CA.
bool MakeCertificate(const std::string& dir) {
  const std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
      "-nodes -days 1 -subj /CN=kube-apiserver -addext "
      "subjectAltName=IP:127.0.0.1 -keyout " +
      dir + "/server.key -out " + dir + "/server.pem >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

struct Figures {
  std::vector<double> apply_ms;  // decision -> PATCH acknowledged (Apply returned ok)
  std::vector<double> calls_per_tick;
  int failures = 0;
};

Figures Run(FakeKubeApiServer& server, KubernetesActuator& actuator, int rescales) {
  const aiscale::WorkloadRef ref{"InferenceService", "ai", "llm"};
  Figures f;
  for (int i = 0; i < rescales; ++i) {
    server.ClearRequests();
    aiscale::Result<aiscale::ScaleState> seen = actuator.Observe(ref);
    const int desired = (seen.ok() ? seen->current : 2) == 2 ? 3 : 2;
    const auto t0 = std::chrono::steady_clock::now();
    const aiscale::Status st = actuator.Apply(ref, desired);
    const auto t1 = std::chrono::steady_clock::now();
    if (!seen.ok() || !st.ok()) {
      ++f.failures;
      continue;
    }
    f.apply_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    f.calls_per_tick.push_back(static_cast<double>(server.Requests().size()));
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int rescales = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rescales") == 0 && i + 1 < argc) {
      rescales = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--rescales N]\n", argv[0]);
      return 2;
    }
  }
  if (rescales < 1) return 2;
  const fs::path dir = fs::temp_directory_path() / ("aiscale-kbench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  if (!MakeCertificate(dir.string())) {
    std::fprintf(stderr, "openssl could not make a certificate\n");
    return 2;
  }
  FakeKubeApiServer::Options o;
  o.cert_file = (dir / "server.pem").string();
  o.key_file = (dir / "server.key").string();
  FakeKubeApiServer server(o);
  if (!server.Start()) return 2;
  for (int n = 0; n < 50; ++n) server.AddNode("gpu-" + std::to_string(n), 8);
  server.AddDeployment("ai", "llm", 2, 2, 1);

  aiscale::act::KubernetesTargetConfig cfg;
  aiscale::act::ResourceForKind("Deployment", cfg.resource);
  cfg.namespace_ = "ai";
  cfg.name = "llm";
  aiscale::act::KubeEndpoint ep;
  ep.server = server.Url();
  ep.token = "fake-token";
  ep.tls.ca_file = o.cert_file;
  aiscale::CurlHttpClient http;
  aiscale::SystemClock clock;
  KubernetesActuator actuator(cfg,
                              std::make_unique<aiscale::act::KubeClient>(
                                  ep, http, clock, aiscale::act::KubeClientOptions{}),
                              clock, [](const std::string&) {});
  const Figures f = Run(server, actuator, rescales);
  std::printf("kubernetes apply over HTTPS to the fake API server, %d rescales (%d failed)\n",
              rescales, f.failures);
  std::printf("decision -> PATCH acknowledged: median %.2f ms, p99 %.2f ms\n",
              Quantile(f.apply_ms, 0.5), Quantile(f.apply_ms, 0.99));
  std::printf(
      "API calls per tick per workload (Observe + Apply with a change): median %.0f, "
      "max %.0f (50 nodes in the cluster, not listed)\n",
      Quantile(f.calls_per_tick, 0.5), Quantile(f.calls_per_tick, 1.0));
  fs::remove_all(dir);
  return f.failures == 0 ? 0 : 1;
}
