// CurlHttpClient: HttpClient over libcurl.
//
// Why libcurl: TLS with a custom CA or client certificate, bearer tokens, proxies and HTTP/1.1
// keep-alive done right, from Debian's own package. Each Send uses its own easy handle, so the
// client is thread-safe with no shared state; limits come from the request (timeout on the whole
// exchange, body capped at max_body_bytes while it streams in, never after).
#pragma once

#include "core/http.h"

namespace aiscale {

class CurlHttpClient final : public HttpClient {
 public:
  CurlHttpClient();  // initializes libcurl once per process
  Result<HttpResponse> Send(const HttpRequest& req) override;
  Result<HttpResponse> Stream(const HttpRequest& req, const StreamHandler& handler) override;
};

}  // namespace aiscale
