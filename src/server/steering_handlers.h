// The API's mutating endpoints: an operator pauses, resumes or pins a workload.
//
//   POST   /api/v1/workloads/{name}/pause    {"direction": "both"|"down"|"up", "until": T}
//   POST   /api/v1/workloads/{name}/resume
//   POST   /api/v1/workloads/{name}/pin      {"replicas": N, "until": T}
//   DELETE /api/v1/workloads/{name}/pin
// T is a duration ("30m") or an RFC 3339 UTC time; absent: until cleared. Every field is
// optional except a pin's replicas. The answer is the workload's override afterwards:
// {"workload": key, "steering": {...}, "message": "paused by API ..."}.
//
// Access: off (403) unless the config sets a token; then `Authorization: Bearer <token>` is
// required: 401 (with WWW-Authenticate) without it or malformed, 403 when it is wrong. The
// token is compared in constant time and never written to a log, a reply or a Decision.
// Errors: 400 malformed body, 404 unknown workload, 409 conflict, 422 a rule broken (a pin
// beyond max_replicas, with the reason), 503 not ready or the store failed.
//
// Thread-safe: the token may be replaced (config reload) while requests are served.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/steering_control.h"
#include "server/api_handlers.h"

namespace aiscale::server {

// The bearer token the mutating endpoints require; empty: steering is off.
class TokenGate {
 public:
  void Set(std::string token);
  bool enabled() const;
  // 0 when `authorization` (the header's value; nullopt when absent) carries the token, else
  // the HTTP status to answer (401, 403) with the reply in `reply`.
  int Check(const std::optional<std::string>& authorization, Reply* reply) const;

 private:
  mutable std::mutex mu_;
  std::string token_;
};

// a == b without an early exit: the time taken depends on the lengths only.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// The steering route of (method, path), if it is one: sets `name` and `op`.
bool IsSteeringRoute(std::string_view method, std::string_view path, std::string* name,
                     SteerOp* op);

// Parses the body, asks `control`, maps the outcome to a Reply. `now` bounds "until" times.
Reply Steer(SteeringControl* control, SteerOp op, const std::string& name, std::string_view body,
            WallTime now);

}  // namespace aiscale::server
