#include "server/operator_routes.h"

#include <httplib.h>

#include "server/api_server.h"
#include "server/dashboard.h"
#include "server/library_server.h"
#include "server/steering_handlers.h"

namespace aiscale::server {
namespace {

constexpr std::string_view kWorkloadPage = "/workloads/";
constexpr std::string_view kStatic = "/static/";

bool IsRead(std::string_view method) { return method == "GET" || method == "HEAD"; }

}  // namespace

std::string_view OperatorRouteName(std::string_view method, std::string_view path) {
  std::string name;
  SteerOp op;
  if (IsSteeringRoute(method, path, &name, &op)) return "steering";
  if (!IsRead(method)) return "";
  if (path == "/") return "dashboard";
  if (path.starts_with(kWorkloadPage)) return "workload_page";
  if (path.starts_with(kStatic)) return "static";
  return "";
}

std::optional<Reply> ApiServer::OperatorRoute(const httplib::Request& req) const {
  if (!operator_) return std::nullopt;
  const std::string_view route = OperatorRouteName(req.method, req.path);
  if (route.empty()) return std::nullopt;
  const WallTime now = operator_->clock->WallNow();
  if (route == "steering") {
    std::string name;
    SteerOp op;
    IsSteeringRoute(req.method, req.path, &name, &op);
    Reply denied;
    std::optional<std::string> auth;
    if (req.has_header("Authorization")) auth = req.get_header_value("Authorization");
    if (!operator_->gate) return ErrorReply(403, "steering is off: no token configured");
    if (operator_->gate->Check(auth, &denied) != 0) return denied;
    return Steer(operator_->steering, op, name, req.body, now);
  }
  if (route == "static") return StaticAsset(std::string_view(req.path).substr(kStatic.size()));
  std::multimap<std::string, std::string> params(req.params.begin(), req.params.end());
  auto p = ParsePageParams(params);
  if (!p.ok()) return ErrorReply(400, p.status().message());
  if (route == "dashboard") return OverviewPage(view_, now, *p);
  const std::string name = req.path.substr(kWorkloadPage.size());
  if (name.empty()) return ErrorReply(404, "no workload named in the path");
  return WorkloadPage(view_, store_, name, now, *p);
}

void ApiServer::AddSteeringHandlers() {
  const auto handle = [this](const httplib::Request& req, httplib::Response& res) {
    Reply reply = OperatorRoute(req).value_or(ErrorReply(404, "no such path: " + req.path));
    if (reply.status == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"aiscale\"");
    res.status = reply.status;
    res.set_content(reply.body, reply.content_type.c_str());
  };
  http_->Post(R"(/api/v1/workloads/.+)", handle);
  http_->Delete(R"(/api/v1/workloads/.+)", handle);
}

}  // namespace aiscale::server
