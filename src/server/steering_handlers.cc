#include "server/steering_handlers.h"

#include <nlohmann/json.hpp>

#include "server/json_views.h"
#include "server/status_json.h"

namespace aiscale::server {
namespace {

constexpr std::string_view kPrefix = "/api/v1/workloads/";
constexpr std::string_view kBearer = "Bearer ";
// Longer headers are junk; no need to compare them.
constexpr size_t kMaxAuthorization = 4096;

int HttpStatusOf(const Status& s) {
  if (s.IsNotFound()) return 404;
  if (s.IsConflict()) return 409;
  if (s.IsInvalid()) return 422;
  if (s.IsPermissionDenied()) return 403;
  if (s.IsUnavailable()) return 503;
  return 500;
}

// The request's fields from its JSON body; kInvalid (a 400) when the body is not what the
// operation takes.
Result<SteerRequest> ParseBody(SteerOp op, const std::string& name, std::string_view body,
                               WallTime now) {
  SteerRequest r;
  r.op = op;
  r.workload = name;
  const auto j =
      body.empty() ? nlohmann::json::object() : nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return Status::Invalid("the body must be a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (k == "direction" && op == SteerOp::kPause) {
      if (!v.is_string()) return Status::Invalid("direction must be a string: both, down or up");
      ASSIGN_OR_RETURN(r.direction, PauseDirectionFromName(v.get<std::string>()));
    } else if (k == "until" && (op == SteerOp::kPause || op == SteerOp::kPin)) {
      if (!v.is_string())
        return Status::Invalid("until must be a string (30m, or an RFC 3339 time)");
      ASSIGN_OR_RETURN(r.until, ParseUntil(v.get<std::string>(), now));
    } else if (k == "replicas" && op == SteerOp::kPin) {
      if (!v.is_number_integer()) return Status::Invalid("replicas must be an integer");
      const auto n = v.get<long long>();
      if (n < 0 || n > 1'000'000) return Status::Invalid("replicas must be in 0..1000000");
      r.replicas = static_cast<int>(n);
    } else {
      return Status::Invalid("unexpected field '" + k.substr(0, 40) + "' in the body");
    }
  }
  if (op == SteerOp::kPin && !j.contains("replicas")) {
    return Status::Invalid("a pin needs {\"replicas\": N}");
  }
  return r;
}

}  // namespace

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of `a` is compared with a byte of `b` (or a stand-in), whatever differs first.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    const unsigned char other = b.empty() ? 0 : static_cast<unsigned char>(b[i % b.size()]);
    diff = diff | (static_cast<unsigned char>(a[i]) ^ other);
  }
  return diff == 0;
}

void TokenGate::Set(std::string token) {
  std::lock_guard<std::mutex> lock(mu_);
  token_ = std::move(token);
}

bool TokenGate::enabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !token_.empty();
}

int TokenGate::Check(const std::optional<std::string>& authorization, Reply* reply) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (token_.empty()) {
    *reply = ErrorReply(403,
                        "steering is off: set server.token_file in the controller config "
                        "to enable pause, resume and pin");
    return 403;
  }
  if (!authorization || authorization->size() > kMaxAuthorization ||
      !authorization->starts_with(kBearer) || authorization->size() == kBearer.size()) {
    *reply = ErrorReply(401, "authorization required: send 'Authorization: Bearer <token>'");
    return 401;
  }
  const std::string_view given = std::string_view(*authorization).substr(kBearer.size());
  if (!ConstantTimeEquals(given, token_)) {
    *reply = ErrorReply(403, "the bearer token is not accepted");
    return 403;
  }
  return 0;
}

bool IsSteeringRoute(std::string_view method, std::string_view path, std::string* name,
                     SteerOp* op) {
  if (!path.starts_with(kPrefix)) return false;
  std::string_view rest = path.substr(kPrefix.size());
  const size_t slash = rest.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return false;
  const std::string_view verb = rest.substr(slash + 1);
  if (method == "POST" && verb == "pause") {
    *op = SteerOp::kPause;
  } else if (method == "POST" && verb == "resume") {
    *op = SteerOp::kResume;
  } else if (method == "POST" && verb == "pin") {
    *op = SteerOp::kPin;
  } else if (method == "DELETE" && verb == "pin") {
    *op = SteerOp::kUnpin;
  } else {
    return false;
  }
  *name = std::string(rest.substr(0, slash));
  return true;
}

Reply Steer(SteeringControl* control, SteerOp op, const std::string& name, std::string_view body,
            WallTime now) {
  if (!control) return ErrorReply(503, "steering is not available in this process");
  auto req = ParseBody(op, name, body, now);
  if (!req.ok()) return ErrorReply(400, req.status().message());
  auto out = control->Apply(*req);
  if (!out.ok()) return ErrorReply(HttpStatusOf(out.status()), out.status().message());
  return Reply{200,
               Dump({{"workload", out->workload},
                     {"steering", SteeringJson(out->steering)},
                     {"message", out->message}}),
               kJsonType};
}

}  // namespace aiscale::server
