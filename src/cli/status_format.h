// The text of `aiscale status`: the table (one row per workload, as `kubectl get hpa`) and the
// describe view of one workload (as `kubectl describe hpa`), both from the API's JSON.
//
// Pure: the JSON and `now` (Unix seconds, for ages) in, text out; a field missing from the
// JSON prints as "-", never a crash. Thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aiscale::cli {

// GET /api/v1/workloads's body -> NAME ENGINE POLICY SIGNALS MIN MAX DESIRED CURRENT READY RULE
// AGE CONDITIONS, columns aligned; SIGNALS as name: current/target per signal, "<stale>" for a
// value that is not data; CONDITIONS lists those not in their normal state, else "OK".
std::string StatusTable(const nlohmann::json& list, double now_s);
// GET /api/v1/workloads/{name} and its /decisions -> the describe view.
std::string DescribeText(const nlohmann::json& workload, const nlohmann::json& decisions,
                         double now_s);

}  // namespace aiscale::cli
