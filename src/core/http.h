// HttpClient: the one way aiscale speaks HTTP(S) to the outside (Prometheus, exposition
// endpoints, readiness probes, API servers).
//
// Why a seam: sources and actuators take an HttpClient&, so tests use canned servers or fakes and
// the real client (CurlHttpClient) enforces the same limits everywhere: a deadline on the whole
// exchange and a cap on the body size, so a server that never ends its body or sends 1 GB cannot
// hang or exhaust a tick. Contract: Send never throws; an HTTP status of any value is a response,
// not an error; errors are transport failures with a code (kUnavailable: refused, reset, DNS,
// TLS; kDeadlineExceeded: the timeout passed; kInvalid: body over max_body_bytes or a bad URL).
// Thread-safe: one client serves every thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace aiscale {

struct TlsOptions {
  std::string ca_file;           // PEM bundle to verify the server with; empty: system CAs
  std::string ca_pem;            // PEM text (e.g. kubeconfig certificate-authority-data)
  std::string client_cert_file;  // mutual TLS; empty: none
  std::string client_key_file;
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_verify = false;  // only when a user asked for it
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  Duration timeout = Seconds(5);               // whole exchange, connect included
  size_t max_body_bytes = 16u * 1024u * 1024;  // larger responses fail with kInvalid
  TlsOptions tls;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  // The first header named `name` (case-insensitive), or empty.
  std::string Header(std::string_view name) const;
};

// Where a streamed body goes (a Kubernetes watch: one JSON event per line, for minutes).
struct StreamHandler {
  // Each piece of a 2xx body as it arrives; false stops reading.
  std::function<bool(std::string_view)> on_data;
  // Polled while the exchange runs, about once a second even when nothing arrives; true stops
  // it. May be empty.
  std::function<bool()> cancelled;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual Result<HttpResponse> Send(const HttpRequest& req) = 0;
  // Like Send, but a 2xx body goes to handler.on_data as it arrives (the returned body is then
  // empty) and is not capped; any other status comes back with its body as Send returns it.
  // req.timeout bounds the whole exchange. A stop asked for by the handler is ok; a transport
  // failure or the timeout mid-body is an error, after the pieces that did arrive. The default
  // (for fakes) sends once and hands the whole body over in one piece.
  virtual Result<HttpResponse> Stream(const HttpRequest& req, const StreamHandler& handler);
  // True once the client was told to stop (a daemon shutting down): callers may stop long work
  // on what they fetched (a parse of a huge body) early. Clients that cannot be stopped: false.
  virtual bool Cancelled() const { return false; }
};

// The error kind of an HTTP status: 404 kNotFound, 409 kConflict, 401/403 kPermissionDenied,
// 408/429/5xx kUnavailable, other 4xx kInvalid; ok for 2xx.
Status StatusFromHttp(int status, const std::string& message);

}  // namespace aiscale
