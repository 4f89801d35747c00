// libFuzzer harness: everything src/act reads from a Kubernetes API server or a kubeconfig.
//
// The input is chunks separated by "\n---\n". The first chunk is a kubeconfig (LoadKubeconfig,
// through a memfd, with its current context, and with the context "other" when the text
// names it). Each later chunk is one HTTP answer: an optional first line
// "<status> [<retry-after>]" (else 200), then the body; a chunk
// starting with '!' is a transport failure. The answers are served in order, through the
// HttpClient seam, to a KubernetesActuator (Observe with gpu_capacity, Apply, Observe: Scale,
// Deployment/StatefulSet/PyTorchJob status, NodeList, PodList, Status error bodies, 409/429/5xx
// retries) and again from the start to a LeaseElector (Step twice, Release: Lease bodies).
// Every body also goes to GpusPerReplica and FreeReplicaSlots directly, and every answer outside
// 2xx to KubeApiError. A leading byte below 3 picks the workload's kind (Deployment,
// StatefulSet, PyTorchJob). Time is a clock that sleeps by jumping, so backoff and Retry-After
// cost nothing.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "act/kubernetes_actuator.h"
#include "act/kubernetes_auth.h"
#include "act/kubernetes_client.h"
#include "act/kubernetes_lease.h"
#include "core/clock.h"
#include "fuzz/fuzz_input.h"

namespace aiscale::fuzz {
namespace {

using nlohmann::json;
using namespace aiscale::act;

class JumpClock final : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  WallTime WallNow() const override { return WallTime(now_.time_since_epoch()); }
  void SleepUntil(TimePoint t) override {
    if (t > now_) now_ = t;
  }

 private:
  TimePoint now_ = TimePoint(Seconds(1.8e9));
};

struct Answer {
  bool transport_error = false;
  HttpResponse response;
};

Answer ParseAnswer(const std::string& chunk) {
  Answer a;
  if (!chunk.empty() && chunk[0] == '!') {
    a.transport_error = true;
    return a;
  }
  a.response.status = 200;
  a.response.body = chunk;
  const size_t eol = chunk.find('\n');
  const std::string first = chunk.substr(0, eol);
  if (first.size() >= 3 && first.size() <= 24 && first[0] >= '1' && first[0] <= '5' &&
      std::isdigit(static_cast<unsigned char>(first[1])) &&
      std::isdigit(static_cast<unsigned char>(first[2]))) {
    a.response.status = (first[0] - '0') * 100 + (first[1] - '0') * 10 + (first[2] - '0');
    if (first.size() > 4 && first[3] == ' ') {
      a.response.headers.emplace_back("retry-after", first.substr(4));
    }
    a.response.body = eol == std::string::npos ? "" : chunk.substr(eol + 1);
  }
  return a;
}

// Serves the answers in order; past the last one, every request is a 404 Status.
class ScriptedHttp final : public HttpClient {
 public:
  explicit ScriptedHttp(const std::vector<Answer>& answers) : answers_(answers) {}
  Result<HttpResponse> Send(const HttpRequest&) override {
    if (next_ >= answers_.size()) {
      return HttpResponse{404, R"({"kind":"Status","code":404,"message":"not found"})", {}};
    }
    const Answer& a = answers_[next_++];
    if (a.transport_error) return Status::Unavailable("connection refused");
    return a.response;
  }
  void Rewind() { next_ = 0; }

 private:
  const std::vector<Answer>& answers_;
  size_t next_ = 0;
};

std::vector<std::string> Split(const std::string& text) {
  static const std::string kSep = "\n---\n";
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = text.find(kSep, start)) != std::string::npos; start = at + kSep.size()) {
    out.push_back(text.substr(start, at - start));
  }
  out.push_back(text.substr(start));
  return out;
}

KubeResource ResourceFor(int kind) {
  KubeResource r;
  ResourceForKind(kind == 1 ? "StatefulSet" : kind == 2 ? "PyTorchJob" : "Deployment", r);
  return r;
}

void ParseBodies(const KubeResource& resource, const std::vector<Answer>& answers) {
  // Each body parsed once (the JSON parse is a good part of an input's cost).
  std::vector<json> bodies;
  bodies.reserve(answers.size());
  for (const Answer& a : answers) bodies.push_back(json::parse(a.response.body, nullptr, false));
  for (size_t i = 0; i < answers.size(); ++i) {
    const HttpResponse& r = answers[i].response;
    // Only where the client calls it, on an answer outside 2xx: it parses the body again.
    if (r.status < 200 || r.status >= 300) (void)KubeApiError(r.status, r.body);
    const json& j = bodies[i];
    if (j.is_discarded()) continue;
    (void)GpusPerReplica(resource, j);
    const json& next = i + 1 < bodies.size() ? bodies[i + 1] : j;
    (void)FreeReplicaSlots(j, next, 1);
    (void)FreeReplicaSlots(next, j, 3);
  }
}

void DriveActuator(const KubeResource& resource, ScriptedHttp& http, JumpClock& clock) {
  KubeEndpoint ep;
  ep.server = "https://127.0.0.1:6443";
  ep.token = "fuzz-token-0123456789";
  KubernetesTargetConfig cfg;
  cfg.resource = resource;
  cfg.namespace_ = "ai";
  cfg.name = "llm";
  cfg.gpu_capacity = true;
  KubeClientOptions opts;
  opts.seed = 1;
  KubernetesActuator a(cfg, std::make_unique<KubeClient>(ep, http, clock, opts), clock, nullptr);
  const WorkloadRef ref{"Deployment", "ai", "llm"};
  (void)a.Observe(ref);
  (void)a.Apply(ref, 5);
  (void)a.Observe(ref);
}

void DriveLease(ScriptedHttp& http, JumpClock& clock) {
  KubeEndpoint ep;
  ep.server = "https://127.0.0.1:6443";
  LeaderElectionConfig cfg;
  cfg.enabled = true;
  cfg.namespace_ = "ai";
  KubeClientOptions opts;
  opts.seed = 1;
  opts.call_timeout = cfg.retry_period;
  LeaseElector el(cfg, "fuzz", std::make_unique<KubeClient>(ep, http, clock, opts), clock);
  el.Step();
  clock.SleepUntil(el.NextStep());
  el.Step();
  (void)el.IsLeader();
  (void)el.Leader();
  (void)el.Release();
}

}  // namespace
}  // namespace aiscale::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiscale;
  using namespace aiscale::fuzz;
  int kind = 0;
  if (size > 0 && data[0] < 3) {
    kind = data[0];
    ++data;
    --size;
  }
  const std::vector<std::string> chunks = Split(AsString(data, size));
  static MemFile kubeconfig;
  const std::string& path =
      kubeconfig.Write(reinterpret_cast<const uint8_t*>(chunks[0].data()), chunks[0].size());
  act::KubeAuthEnv env;
  env.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  (void)act::LoadKubeconfig(path, "", env);
  // The named context only when the kubeconfig can name it: parsing the YAML is half of an
  // input's cost, and a context absent from the file is the current-context path's error too.
  if (chunks[0].find("other") != std::string::npos) {
    (void)act::LoadKubeconfig(path, "other", env);
  }

  std::vector<Answer> answers;
  for (size_t i = 1; i < chunks.size(); ++i) answers.push_back(ParseAnswer(chunks[i]));
  const act::KubeResource resource = ResourceFor(kind);
  ParseBodies(resource, answers);
  ScriptedHttp http(answers);
  JumpClock clock;
  DriveActuator(resource, http, clock);
  http.Rewind();
  DriveLease(http, clock);
  return 0;
}
