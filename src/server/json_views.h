// JSON bodies of the HTTP API: workloads (list and detail), signals, decision lists and
// errors, built from LiveView copies and Store records.
//
// Why apart from the server: they are pure functions of their inputs, so tests and other
// front ends (aiscale explain prints the same times) use them without HTTP. None throws;
// Dump replaces invalid UTF-8 (a detail string from a broken exporter) instead of throwing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/decision.h"
#include "core/time.h"
#include "core/workload_view.h"

namespace aiscale::server {

// One line of GET /api/v1/workloads: identity, policy, engine, scale and the last decision
// in brief (rule, recommended, action, summary) with its wall time (null when none).
nlohmann::json WorkloadSummaryJson(const WorkloadView& w);
// GET /api/v1/workloads/{name}: the summary's fields, the last decision in full (ToJson) and
// every signal with its status and age.
nlohmann::json WorkloadDetailJson(const WorkloadView& w);
nlohmann::json SignalJson(const SignalView& s);
// GET .../decisions: {"workload": key, "count": n, "decisions": [ToJson...]} in the order given.
nlohmann::json DecisionListJson(const std::string& key, const std::vector<Decision>& decisions);

// GET /api/v1/pool: {"known", "gpus", "granted", "idle", "reclaimed", "detail", "tenants":
// [{"name", "guaranteed", "borrow_limit" (null: none), "weight", "wanted", "granted",
// "borrowed"}]}; gpus and idle are null while the size is unknown.
nlohmann::json PoolJson(const PoolView& p);

// {"error": {"code": 404, "reason": "NotFound", "message": "..."}}.
nlohmann::json ErrorJson(int http_status, std::string_view message);
// The Kubernetes-style reason of an HTTP status: "BadRequest", "NotFound", "MethodNotAllowed",
// "InternalError", "ServiceUnavailable"; "Error" for others.
std::string_view ReasonOf(int http_status);

// Compact JSON text; never throws.
std::string Dump(const nlohmann::json& j);

}  // namespace aiscale::server
