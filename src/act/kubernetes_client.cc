#include "act/kubernetes_client.h"

#include <algorithm>
#include <cctype>

namespace aiscale::act {
namespace {

bool IsRetryableStatus(int status) { return status >= 500 || status == 429; }

// Retry-After in seconds (delta-seconds form; the API server never sends an HTTP date), else
// the Status body's details.retryAfterSeconds, else 1 s.
Duration RetryAfter(const HttpResponse& r) {
  // A day at most: longer is past any call's deadline anyway, and a huge number must neither
  // throw (std::stod past 1e308) nor overflow the deadline arithmetic.
  constexpr double kMaxS = 86400;
  const std::string h = r.Header("Retry-After");
  if (!h.empty() && std::all_of(h.begin(), h.end(), [](char c) { return std::isdigit(c); })) {
    return Seconds(h.size() > 6 ? kMaxS : std::min(kMaxS, std::stod(h)));
  }
  const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
  if (body.is_object() && body.contains("details") && body["details"].is_object()) {
    const auto& d = body["details"];
    if (d.contains("retryAfterSeconds") && d["retryAfterSeconds"].is_number()) {
      return Seconds(std::clamp(d["retryAfterSeconds"].get<double>(), 0.0, kMaxS));
    }
  }
  return Seconds(1);
}

// A server may echo the request's credentials in an error (a proxy's 401 page, a webhook's
// message): the token is cut from every body and message an error is built from. Tokens
// shorter than 8 bytes are not real credentials and would mangle ordinary text.
void Redact(std::string& text, const std::string& token) {
  if (token.size() < 8) return;
  const std::string mask = "<redacted>";
  for (size_t pos = text.find(token); pos != std::string::npos;
       pos = text.find(token, pos + mask.size())) {
    text.replace(pos, token.size(), mask);
  }
}

}  // namespace

Status KubeApiError(int http_status, const std::string& body) {
  std::string message;
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("kind") && j["kind"] == "Status" && j.contains("message") &&
      j["message"].is_string()) {
    message = j["message"].get<std::string>();
  } else {
    message = body.substr(0, 200);
  }
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return StatusFromHttp(http_status, message.empty() ? "no message" : message);
}

KubeClient::KubeClient(const KubeEndpoint& endpoint, HttpClient& http, Clock& clock,
                       KubeClientOptions options)
    : server_(endpoint.server),
      tls_(endpoint.tls),
      token_(endpoint),
      http_(http),
      clock_(clock),
      options_(options),
      rng_(options.seed ? options.seed : std::random_device{}()) {}

Result<HttpRequest> KubeClient::MakeRequest(const std::string& method, const std::string& url,
                                            Duration timeout, std::string& token) {
  HttpRequest req;
  req.method = method;
  req.url = url;
  req.tls = tls_;
  req.timeout = timeout;
  req.headers.emplace_back("Accept", "application/json");
  req.headers.emplace_back("User-Agent", "aiscale");
  ASSIGN_OR_RETURN(token, token_.Token());
  if (!token.empty()) req.headers.emplace_back("Authorization", "Bearer " + token);
  return req;
}

Result<HttpResponse> KubeClient::Attempt(const std::string& method, const std::string& url,
                                         const std::string& body, const std::string& content_type,
                                         Duration timeout) {
  std::string token;
  ASSIGN_OR_RETURN(HttpRequest req, MakeRequest(method, url, timeout, token));
  if (!body.empty()) {
    req.headers.emplace_back("Content-Type", content_type);
    req.body = body;
  }
  Result<HttpResponse> r = http_.Send(req);
  if (token.size() < 8) return r;
  if (!r.ok()) {
    std::string m = r.status().message();
    Redact(m, token);
    return Status::FromCode(r.status().code(), m);
  }
  if (r->status < 200 || r->status >= 300) Redact(r->body, token);
  return r;
}

Result<HttpResponse> KubeClient::Stream(const std::string& path, const StreamHandler& handler,
                                        Duration timeout) {
  std::string token;
  ASSIGN_OR_RETURN(HttpRequest req, MakeRequest("GET", server_ + path, timeout, token));
  Result<HttpResponse> r = http_.Stream(req, handler);
  if (!r.ok()) {
    std::string m = r.status().message();
    Redact(m, token);
    return Status::FromCode(r.status().code(), "unable to GET " + path + ": " + m);
  }
  Redact(r->body, token);
  return r;
}

Duration KubeClient::NextBackoff(int attempt) {
  Duration d = options_.backoff_initial;
  for (int i = 0; i < attempt && d < options_.backoff_max; ++i) d *= 2;
  d = std::min(d, options_.backoff_max);
  std::lock_guard<std::mutex> lock(mu_);
  std::uniform_int_distribution<int64_t> half(0, d.count() / 2);
  return Duration(d.count() / 2 + half(rng_));
}

Result<nlohmann::json> KubeClient::Call(const std::string& method, const std::string& path,
                                        const std::string& body, const std::string& content_type) {
  const std::string what = method + " " + path;
  const TimePoint deadline = clock_.Now() + options_.call_timeout;
  Status last;
  for (int attempt = 0;; ++attempt) {
    const Duration left = deadline - clock_.Now();
    if (left <= Duration::zero()) {
      return Status::DeadlineExceeded("unable to " + what + " within " +
                                      std::to_string(ToSeconds(options_.call_timeout)) + " s (" +
                                      std::to_string(attempt) + " attempts): " + last.message());
    }
    Result<HttpResponse> r = Attempt(method, server_ + path, body, content_type,
                                     std::min(left, options_.attempt_timeout));
    Duration wait{};
    if (!r.ok()) {
      // A bad URL or an untrusted certificate: a retry would fail the same way.
      if (r.status().IsInvalid() || r.status().IsPermissionDenied()) {
        return r.status().Wrap("unable to " + what);
      }
      last = r.status();
      wait = NextBackoff(attempt);
    } else if (r->status >= 200 && r->status < 300) {
      nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
      // Every answer the API server gives these calls is an object; anything else (a proxy's
      // page, a bare number) is refused here, so no caller reads fields of a non-object.
      if (!j.is_object()) {
        return Status::Internal("unable to " + what + ": response is not a JSON object");
      }
      return j;
    } else if (!IsRetryableStatus(r->status)) {
      Status st = KubeApiError(r->status, r->body).Wrap("unable to " + what);
      const std::string problem = st.IsPermissionDenied() ? token_.Problem() : "";
      return problem.empty() ? st
                             : Status::FromCode(st.code(), st.message() + " (" + problem + ")");
    } else {
      last = KubeApiError(r->status, r->body);
      wait = r->status == 429 ? RetryAfter(*r) : NextBackoff(attempt);
      if (r->status == 429 && clock_.Now() + wait > deadline) {
        return Status::Unavailable(
            "unable to " + what + ": " + last.message() + "; the server asks to retry after " +
            std::to_string(static_cast<int>(ToSeconds(wait))) + " s, past the call's deadline");
      }
    }
    if (clock_.Now() + wait >= deadline) {
      return Status::FromCode(last.code(), "unable to " + what + " after " +
                                               std::to_string(attempt + 1) +
                                               " attempts within the deadline: " + last.message());
    }
    clock_.SleepUntil(clock_.Now() + wait);
  }
}

}  // namespace aiscale::act
