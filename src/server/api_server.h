// ApiServer: the daemon's HTTP endpoint (cpp-httplib) for probes, /metrics and the read-only
// API over what the controller knows now (LiveView) and what it decided (Store).
//
//   GET /healthz                                200 "ok" while the process serves
//   GET /readyz                                 200 once LiveView::Ready(), else 503
//   GET /metrics                                Telemetry::RenderText (text format 0.0.4)
//   GET /api/v1/workloads                       every workload in brief
//   GET /api/v1/workloads/{name}                one workload: scale, last decision, signals
//   GET /api/v1/workloads/{name}/decisions?limit=N   stored decisions, newest first
//
// {name} is namespace/name (its slash URL-encoded or not) or a plain name. Errors are JSON
// {"error": {"code", "reason", "message"}}; any method but GET/HEAD gets 405. The server never
// calls a policy and writes nothing. It counts requests in aiscale_api_requests_total.
//
// Sockets are the HttpListener's (http_listener.h): limits on header count and size, body
// size, connections, idle, read and write time, and /healthz and /readyz answered on the
// polling thread, so no client, however slow or many, keeps the probes from answering.
// Refusals are counted in aiscale_api_rejected_total{reason}. Routing and handlers run in
// cpp-httplib over each complete request (library_server.h).
//
// Lifetime: view, store and telemetry must outlive the server. Start binds and serves on
// threads of its own; Stop (and the destructor) closes the listener and joins every thread.
// Start/Stop are not to be called concurrently with each other; handlers run concurrently with
// anything.
//
//   ApiServer api({.host = "0.0.0.0", .port = 9464}, view, store.get(), telemetry);
//   RETURN_IF_ERROR(api.Start());
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/result.h"
#include "core/steering_control.h"
#include "core/store.h"
#include "core/telemetry.h"
#include "core/workload_view.h"
#include "server/api_handlers.h"

#include "server/http_listener.h"

namespace httplib {
struct Request;
}  // namespace httplib

namespace aiscale::server {

class LibraryServer;
class TokenGate;

// The dashboard and the steering endpoints (server/dashboard.h, server/steering_handlers.h),
// served beside the read API once EnableOperatorRoutes is called.
struct OperatorRoutes {
  const Clock* clock = nullptr;         // the dashboard's "now"; required
  SteeringControl* steering = nullptr;  // null: the mutating endpoints answer 503
  const TokenGate* gate = nullptr;      // null or without a token: they answer 403
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 9464;  // 0: an ephemeral port, see ApiServer::port()
  ListenerLimits limits{};
};

class ApiServer {
 public:
  // `store` may be null: the decisions endpoint then answers 503.
  ApiServer(ServerOptions options, const LiveView& view, Store* store, Telemetry& telemetry);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds host:port and starts serving. kUnavailable naming host:port when the address is in
  // use or cannot be bound; kConflict when already started.
  Status Start();
  // Stops accepting, lets handlers in flight finish, closes every connection and joins the
  // threads; an idle or stalled client does not delay it. Idempotent.
  void Stop();
  // The bound port (the ephemeral one when options.port was 0); 0 before Start.
  int port() const { return port_; }
  // Connections open now (0 before Start).
  size_t connections() const { return listener_ ? listener_->connections() : 0; }
  // Serves the dashboard at / and the steering endpoints; call before Start.
  void EnableOperatorRoutes(OperatorRoutes routes) { operator_ = routes; }

 private:
  void Routes();
  // The dashboard's or a steering endpoint's reply when the request is for one
  // (operator_routes.cc).
  std::optional<Reply> OperatorRoute(const httplib::Request& req) const;
  // The steering endpoints as httplib handlers (they need the request body; operator_routes.cc).
  void AddSteeringHandlers();

  const ServerOptions options_;
  const LiveView& view_;
  Store* const store_;
  Telemetry& telemetry_;
  std::optional<OperatorRoutes> operator_;
  std::unique_ptr<LibraryServer> http_;
  std::unique_ptr<HttpListener> listener_;
  int port_ = 0;
};

}  // namespace aiscale::server
