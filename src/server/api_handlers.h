// The API's handlers as plain functions from (LiveView, Store, request parts) to a Reply, so
// ApiServer is only routing and tests can call them without sockets.
//
// Contract: read-only (LiveView copies and Store::Recent; never a policy, never a write).
// Never throw. Errors are Replies with the JSON error body of json_views.h. Thread-safe as
// far as LiveView and Store are (both promise it).
#pragma once

#include <optional>
#include <string>

#include "core/result.h"
#include "core/store.h"
#include "core/telemetry.h"
#include "core/workload_view.h"

namespace aiscale::server {

inline constexpr const char* kJsonType = "application/json";
inline constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr const char* kTextType = "text/plain; charset=utf-8";

inline constexpr size_t kDefaultDecisionLimit = 20;
inline constexpr size_t kMaxDecisionLimit = 1000;

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = kJsonType;
};

Reply ErrorReply(int http_status, std::string_view message);

Reply Healthz();
Reply Readyz(const LiveView& view);
Reply Metrics(const Telemetry& telemetry);
Reply ListWorkloads(const LiveView& view);
// GET /api/v1/pool: the shared pool after the last tick (PoolJson); 404 when the daemon runs
// no pool, 503 before its first tick.
Reply GetPool(const LiveView& view);
// `name` is a key (namespace/name) or a plain name that only one workload has.
Reply GetWorkload(const LiveView& view, const std::string& name);
// `limit` is the raw query parameter (nullopt when absent). Newest first. A workload that left
// the config but has stored decisions is still answered.
Reply ListDecisions(const LiveView& view, Store* store, const std::string& name,
                    const std::optional<std::string>& limit);

// The workload `name` means: an exact key, else the only workload with that plain name.
// kNotFound when none, kInvalid when the plain name is ambiguous (the message lists keys).
Result<WorkloadView> ResolveWorkload(const LiveView& view, const std::string& name);
// "20" → 20; kInvalid unless an integer in 1..kMaxDecisionLimit; nullopt → the default.
Result<size_t> ParseLimit(const std::optional<std::string>& limit);

}  // namespace aiscale::server
