// KubeClient never lets its bearer token into an error (issue 11 §5): a server that echoes the
// request's credentials back (a proxy's 401 page, a webhook's message) in a Status message, in a
// body that is not a Status, on a retried 5xx, or a transport error that names it, yields a
// Status with the token cut out. The token still reaches the server (the test's control).
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "act/kubernetes_client.h"

namespace aiscale::act {
namespace {

constexpr const char* kToken = "s3cr3t-T0ken-9f8e7d6c5b4a39281706";

// Answers every request with `status` and `body`, where "{auth}" is replaced by the request's
// Authorization header; status 0 answers with a transport error that quotes the header.
class EchoingHttpClient final : public HttpClient {
 public:
  EchoingHttpClient(int status, std::string body) : status_(status), body_(std::move(body)) {}
  Result<HttpResponse> Send(const HttpRequest& req) override {
    std::string auth;
    for (const auto& [k, v] : req.headers) {
      if (k == "Authorization") auth = v;
    }
    seen_.push_back(auth);
    std::string body = body_;
    for (size_t p = body.find("{auth}"); p != std::string::npos; p = body.find("{auth}")) {
      body.replace(p, 6, auth);
    }
    if (status_ == 0) return Status::Unavailable("connection reset after sending " + body);
    HttpResponse r;
    r.status = status_;
    r.body = body;
    return r;
  }
  const std::vector<std::string>& seen() const { return seen_; }

 private:
  int status_;
  std::string body_;
  std::vector<std::string> seen_;
};

// Moves only when slept on, so retries cost no real time.
class StepClock final : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  WallTime WallNow() const override { return WallTime(Seconds(1796000000)); }
  void SleepUntil(TimePoint t) override { now_ = std::max(now_, t); }

 private:
  TimePoint now_{};
};

TEST(KubeClientSecrets, NoErrorCarriesTheToken) {
  const std::string status_body = R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                                  R"("message":"credentials {auth} rejected","code":401})";
  struct Case {
    std::string name;
    int status;
    std::string body;
  };
  const std::vector<Case> cases = {
      {"401 Status message quoting the header", 401, status_body},
      {"403 plain-text body quoting it twice", 403, "denied: {auth} / {auth}"},
      {"500 retried until the deadline", 500, "upstream said {auth}"},
      {"429 without Retry-After", 429, "slow down {auth}"},
      {"transport error naming it", 0, "{auth}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    KubeEndpoint ep;
    ep.server = "http://127.0.0.1:1";
    ep.token = kToken;
    EchoingHttpClient http(c.status, c.body);
    StepClock clock;
    KubeClientOptions opts;
    opts.call_timeout = Seconds(1);
    opts.seed = 1;
    KubeClient client(ep, http, clock, opts);
    Result<nlohmann::json> r = client.Call("GET", "/apis/apps/v1/namespaces/a/deployments/b");
    ASSERT_FALSE(r.ok());
    ASSERT_FALSE(http.seen().empty());
    EXPECT_EQ(http.seen().front(), std::string("Bearer ") + kToken);  // the token was sent
    EXPECT_EQ(r.status().message().find(kToken), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("<redacted>"), std::string::npos) << r.status().message();
  }
}

// A token that happens to equal the mask's inner text must not loop forever or leak.
TEST(KubeClientSecrets, TokenInsideTheMaskTerminates) {
  KubeEndpoint ep;
  ep.server = "http://127.0.0.1:1";
  ep.token = "redacted";
  EchoingHttpClient http(401, "no: {auth} {auth}");
  StepClock clock;
  KubeClient client(ep, http, clock, KubeClientOptions{});
  Result<nlohmann::json> r = client.Call("GET", "/api/v1/nodes");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find("Bearer redacted"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace aiscale::act
