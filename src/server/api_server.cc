#include "server/api_server.h"

#include <chrono>
#include <string>

#include "server/api_handlers.h"
#include "server/json_views.h"
#include "server/library_server.h"
#include "server/operator_routes.h"

namespace aiscale::server {
namespace {

constexpr const char* kRequestsTotal = "aiscale_api_requests_total";
constexpr const char* kRejectedTotal = "aiscale_api_rejected_total";
constexpr std::string_view kWorkloadsPath = "/api/v1/workloads";
constexpr std::string_view kDecisionsSuffix = "/decisions";
constexpr std::string_view kPoolPath = "/api/v1/pool";

enum class Route {
  kNone,
  kHealthz,
  kReadyz,
  kMetrics,
  kWorkloads,
  kWorkload,
  kDecisions,
  kEmptyName,  // /api/v1/workloads//decisions: a workload path without its name
  kPool
};

std::string_view RouteName(Route r) {
  static constexpr std::string_view kNames[] = {
      "none", "healthz", "readyz", "metrics", "workloads", "workload", "decisions", "none", "pool"};
  return kNames[static_cast<int>(r)];
}

// The route of a (decoded) path, and in `name` the workload it names. A workload whose own
// name ends in "/decisions" cannot be addressed; Kubernetes names have no slash, so none does.
Route RouteOf(std::string_view path, std::string* name) {
  if (path == "/healthz") return Route::kHealthz;
  if (path == "/readyz") return Route::kReadyz;
  if (path == "/metrics") return Route::kMetrics;
  if (path == kWorkloadsPath) return Route::kWorkloads;
  if (path == kPoolPath) return Route::kPool;
  if (!path.starts_with(kWorkloadsPath) || path.size() <= kWorkloadsPath.size() + 1 ||
      path[kWorkloadsPath.size()] != '/') {
    return Route::kNone;
  }
  std::string_view rest = path.substr(kWorkloadsPath.size() + 1);
  Route route = Route::kWorkload;
  if (rest.size() >= kDecisionsSuffix.size() && rest.ends_with(kDecisionsSuffix)) {
    rest.remove_suffix(kDecisionsSuffix.size());
    route = Route::kDecisions;
  }
  // "//decisions", "//x": a name (or namespace) that is empty.
  if (rest.empty() || rest.front() == '/') return Route::kEmptyName;
  if (rest.back() == '/') return Route::kNone;
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
  telemetry_.DeclareCounter(kRejectedTotal,
                            "Connections or requests the API server refused or closed over a "
                            "limit, by reason (head_too_large, timeout, evicted...).");
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
    } else if (route == Route::kEmptyName) {
      reply = ErrorReply(400, "no workload name in " + req.path +
                                  ": use /api/v1/workloads/{namespace/name or name}[/decisions]");
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
    } else if (route == Route::kPool) {
      reply = GetPool(view_);
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

// A whole response for a request the listener refuses itself, in the API's JSON error form.
static std::string RefusalResponse(int status, const std::string& why) {
  const Reply r = ErrorReply(status, why);
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  out += ReasonOf(status);  // the reason phrase is informative only (RFC 9112 4)
  out += "\r\nContent-Type: ";
  out += r.content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(r.body.size());
  out += "\r\nConnection: close\r\n\r\n";
  out += r.body;
  return out;
}

Status ApiServer::Start() {
  const std::string address = Address(options_.host, options_.port);
  if (http_) return Status::Conflict("api server already serving on " + address);
  if (options_.port < 0 || options_.port > 65535) {
    return Status::Invalid("invalid api server port in " + address + ": must be 0..65535");
  }
  http_ = std::make_unique<LibraryServer>();
  http_->set_payload_max_length(options_.limits.head.max_body_bytes);
  http_->set_keep_alive_max_count(options_.limits.max_requests_per_connection);
  http_->set_keep_alive_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(options_.limits.idle_timeout).count());
  Routes();
  ListenerHandlers h;
  h.process = [this](std::string_view request, const Peer& peer, bool keep_alive, bool& close) {
    return http_->Process(request, peer, keep_alive, close);
  };
  h.reject = RefusalResponse;
  h.fast = [](std::string_view path) { return path == "/healthz" || path == "/readyz"; };
  h.on_reject = [this](std::string_view reason) {
    telemetry_.Add(kRejectedTotal, {{"reason", std::string(reason)}});
  };
  listener_ = std::make_unique<HttpListener>(options_.host, options_.port, options_.limits, h);
  if (Status st = listener_->Start(); !st.ok()) {
    listener_.reset();
    http_.reset();
    return st;
  }
  port_ = listener_->port();
  return Status::Ok();
}

void ApiServer::Stop() {
  if (!http_) return;
  if (listener_) listener_->Stop();
  listener_.reset();
  http_.reset();
  port_ = 0;
}

}  // namespace aiscale::server
