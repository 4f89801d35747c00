// KubeClient: one Kubernetes API call with retries chosen by the error's kind, over the
// HttpClient seam, within a per-call deadline on the injected Clock.
//
// Retries: 429 waits for Retry-After (or the Status body's details.retryAfterSeconds) when that
// fits before the deadline; 5xx and transport failures back off exponentially with jitter
// (half fixed, half random) until the deadline. Everything else is returned at once as a
// Status whose message is the API's own (the meta/v1 Status `message`): 404 kNotFound,
// 409 kConflict, 401/403 kPermissionDenied, 422 and other 4xx kInvalid. A token or key never
// appears in a message. Thread-safe; the HttpClient and Clock must outlive it.
//
//   KubeClient client(endpoint, http, clock, {});
//   Result<nlohmann::json> scale = client.Call("GET",
//   "/apis/apps/v1/namespaces/ai/deployments/llm/scale");
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "act/kubernetes_auth.h"
#include "core/clock.h"
#include "core/http.h"
#include "core/result.h"

namespace aiscale::act {

struct KubeClientOptions {
  Duration call_timeout = Seconds(10);    // the whole call, retries and waits included
  Duration attempt_timeout = Seconds(5);  // one HTTP exchange (capped by what is left)
  Duration backoff_initial = Seconds(0.1);
  Duration backoff_max = Seconds(2);
  unsigned seed = 0;  // jitter; 0: from std::random_device
};

class KubeClient {
 public:
  KubeClient(const KubeEndpoint& endpoint, HttpClient& http, Clock& clock,
             KubeClientOptions options);

  // `method` `path` (from /api or /apis) with an optional JSON body of `content_type`; the
  // parsed JSON body of a 2xx answer, or the error as above.
  Result<nlohmann::json> Call(const std::string& method, const std::string& path,
                              const std::string& body = "",
                              const std::string& content_type = "application/json");
  // A streamed GET of `path` (a watch), once, without retries (the caller's loop decides):
  // a 2xx body goes to `handler` as it arrives, `timeout` bounds the whole exchange. The
  // answer's status comes back with, when not 2xx, its body; a transport failure is an error.
  Result<HttpResponse> Stream(const std::string& path, const StreamHandler& handler,
                              Duration timeout);
  const std::string& server() const { return server_; }

 private:
  // The request every call sends: Accept, User-Agent, the bearer token, TLS.
  Result<HttpRequest> MakeRequest(const std::string& method, const std::string& url,
                                  Duration timeout, std::string& token);
  // One attempt: the response, or a transport error.
  Result<HttpResponse> Attempt(const std::string& method, const std::string& url,
                               const std::string& body, const std::string& content_type,
                               Duration timeout);
  Duration NextBackoff(int attempt);

  std::string server_;
  TlsOptions tls_;
  KubeTokenSource token_;
  HttpClient& http_;
  Clock& clock_;
  KubeClientOptions options_;
  std::mutex mu_;  // guards rng_
  std::mt19937 rng_;
};

// The error of a non-2xx API answer: its code by HTTP status, its message the API's own
// (the Status body's `message`, else the body's first 200 bytes). "HTTP 404: ... not found".
Status KubeApiError(int http_status, const std::string& body);

}  // namespace aiscale::act
