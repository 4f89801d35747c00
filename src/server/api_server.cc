#include "server/api_server.h"

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <httplib.h>

#include "server/api_handlers.h"
#include "server/json_views.h"
#include "server/operator_routes.h"

namespace aiscale::server {
namespace {

constexpr const char* kRequestsTotal = "aiscale_api_requests_total";
constexpr std::string_view kWorkloadsPath = "/api/v1/workloads";
constexpr std::string_view kDecisionsSuffix = "/decisions";

enum class Route { kNone, kHealthz, kReadyz, kMetrics, kWorkloads, kWorkload, kDecisions };

std::string_view RouteName(Route r) {
  static constexpr std::string_view kNames[] = {"none",      "healthz",  "readyz",   "metrics",
                                                "workloads", "workload", "decisions"};
  return kNames[static_cast<int>(r)];
}

// The route of a (decoded) path, and in `name` the workload it names. A workload whose own
// name ends in "/decisions" cannot be addressed; Kubernetes names have no slash, so none does.
Route RouteOf(std::string_view path, std::string* name) {
  if (path == "/healthz") return Route::kHealthz;
  if (path == "/readyz") return Route::kReadyz;
  if (path == "/metrics") return Route::kMetrics;
  if (path == kWorkloadsPath) return Route::kWorkloads;
  if (!path.starts_with(kWorkloadsPath) || path.size() <= kWorkloadsPath.size() + 1 ||
      path[kWorkloadsPath.size()] != '/') {
    return Route::kNone;
  }
  std::string_view rest = path.substr(kWorkloadsPath.size() + 1);
  Route route = Route::kWorkload;
  if (rest.size() > kDecisionsSuffix.size() && rest.ends_with(kDecisionsSuffix)) {
    rest.remove_suffix(kDecisionsSuffix.size());
    route = Route::kDecisions;
  }
  if (rest.empty() || rest.back() == '/') return Route::kNone;
  *name = std::string(rest);
  return route;
}

std::string Address(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

ApiServer::ApiServer(ServerOptions options, const LiveView& view, Store* store,
                     Telemetry& telemetry)
    : options_(std::move(options)), view_(view), store_(store), telemetry_(telemetry) {
  telemetry_.DeclareCounter(kRequestsTotal,
                            "HTTP requests answered by the API server, by route and status code.");
}

ApiServer::~ApiServer() { Stop(); }

void ApiServer::Routes() {
  // Every request is answered here, before httplib's own routing, so one table decides
  // between 200, 404 and 405 for every method.
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    std::string name;
    const Route route = RouteOf(req.path, &name);
    Reply reply;
    // A steering call carries a body, which httplib reads only after this handler.
    if (operator_ && OperatorRouteName(req.method, req.path) == "steering") {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    if (auto r = OperatorRoute(req)) {
      reply = std::move(*r);
    } else if (route == Route::kNone) {
      reply = ErrorReply(404, "no such path: " + req.path);
    } else if (req.method != "GET" && req.method != "HEAD") {
      reply = ErrorReply(405, "method " + req.method + " not allowed: the API is read-only");
      res.set_header("Allow", "GET, HEAD");
    } else if (route == Route::kHealthz) {
      reply = Healthz();
    } else if (route == Route::kReadyz) {
      reply = Readyz(view_);
    } else if (route == Route::kMetrics) {
      reply = Metrics(telemetry_);
    } else if (route == Route::kWorkloads) {
      reply = ListWorkloads(view_);
    } else if (route == Route::kWorkload) {
      reply = GetWorkload(view_, name);
    } else {
      std::optional<std::string> limit;
      if (req.has_param("limit")) limit = req.get_param_value("limit");
      reply = ListDecisions(view_, store_, name, limit);
    }
    res.status = reply.status;
    res.set_content(reply.body, reply.content_type.c_str());
    return httplib::Server::HandlerResponse::Handled;
  });
  if (operator_) AddSteeringHandlers();
  // httplib's own errors (a malformed request line, a body too large) as JSON too.
  http_->set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        res.set_content(Dump(ErrorJson(res.status, ReasonOf(res.status))), kJsonType);
        return httplib::Server::HandlerResponse::Handled;
      }));
  http_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(Dump(ErrorJson(500, "internal error while answering")), kJsonType);
      });
  // Counted before the answer is written (httplib's logger runs after it): a client that has
  // its answer finds it counted in the next /metrics.
  http_->set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    std::string name;
    std::string_view route = operator_ ? OperatorRouteName(req.method, req.path) : "";
    if (route.empty()) route = RouteName(RouteOf(req.path, &name));
    telemetry_.Add(kRequestsTotal,
                   {{"route", std::string(route)}, {"code", std::to_string(res.status)}});
  });
}

Status ApiServer::Start() {
  const std::string address = Address(options_.host, options_.port);
  if (http_) return Status::Conflict("api server already serving on " + address);
  if (options_.port < 0 || options_.port > 65535) {
    return Status::Invalid("invalid api server port in " + address + ": must be 0..65535");
  }
  http_ = std::make_unique<httplib::Server>();
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second daemon on the
  // same port would bind without error and silently share the traffic.
  http_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  http_->set_payload_max_length(64 * 1024);  // no endpoint takes a body
  // Stop waits for every worker, and a worker waits out an idle keep-alive connection or a
  // slow client; these bound Stop to about 2 s (a scrape every 15 s gains nothing from a longer
  // keep-alive anyway).
  http_->set_keep_alive_timeout(1);
  http_->set_read_timeout(2);
  http_->set_write_timeout(2);
  Routes();
  errno = 0;
  const int port = options_.port == 0
                       ? http_->bind_to_any_port(options_.host)
                       : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port <= 0) {
    const int err = errno;
    http_.reset();
    return Status::Unavailable("unable to listen on " + address + ": " +
                               (err ? std::strerror(err) : "bind failed") +
                               " (is another process using the port?)");
  }
  port_ = port;
  listening_done_ = false;
  thread_ = std::thread([this] {
    http_->listen_after_bind();
    listening_done_ = true;
  });
  // httplib's stop() is a no-op until its loop runs, so Stop right after Start would hang
  // unless Start waits for the loop (a few microseconds).
  while (!http_->is_running() && !listening_done_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (listening_done_) {
    Stop();
    return Status::Unavailable("unable to serve on " + address + ": the listener stopped");
  }
  return Status::Ok();
}

void ApiServer::Stop() {
  if (!http_) return;
  http_->stop();
  if (thread_.joinable()) thread_.join();
  http_.reset();
  port_ = 0;
}

}  // namespace aiscale::server
