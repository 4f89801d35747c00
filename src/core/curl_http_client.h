// CurlHttpClient: HttpClient over libcurl.
//
// Why libcurl: TLS with a custom CA or client certificate, bearer tokens, proxies and HTTP/1.1
// keep-alive done right, from Debian's own package. Each Send uses its own easy handle, so the
// client is thread-safe (the only shared state is the cancel flag); limits come from the request
// (timeout on the whole exchange, body capped at max_body_bytes while it streams in, never
// after, and after decoding). Every request says Accept-Encoding: gzip, as Prometheus does when
// it scrapes, and a compressed body is decoded (gzip, deflate, and br or zstd where libcurl has
// them); a body in an encoding it cannot decode is an error naming the encoding, never bytes
// handed to a parser as if they were text.
#pragma once

#include <atomic>

#include "core/http.h"

namespace aiscale {

class CurlHttpClient final : public HttpClient {
 public:
  CurlHttpClient();  // initializes libcurl once per process
  Result<HttpResponse> Send(const HttpRequest& req) override;
  Result<HttpResponse> Stream(const HttpRequest& req, const StreamHandler& handler) override;
  // Aborts every transfer in flight (within libcurl's progress interval, well under a second)
  // and fails every later Send with kUnavailable: a stopping daemon does not wait out a slow
  // server. For good; thread-safe.
  void Cancel() { cancelled_.store(true); }
  bool Cancelled() const override { return cancelled_.load(); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace aiscale
