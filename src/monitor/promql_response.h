// PromQL response parser: the JSON envelope of Prometheus' /api/v1/query (and query_range),
// as documented in prometheus docs/querying/api.md and produced by web/api/v1/api.go.
//
// What it promises: a pure function of (HTTP status, body); never throws. A vector yields one
// series per element with its labels and (timestamp, value); a matrix yields each series'
// newest point; a scalar (or a numeric string) yields one unlabelled series; an empty result
// yields no series (the caller decides that it is missing data). Sample values arrive as
// strings ("1.5", "NaN", "+Inf", "-Inf") and are returned as doubles, NaN and infinities
// included: filtering happens once, in core. Errors carry a code:
//   status=error  -> by errorType: bad_data kInvalid, timeout kDeadlineExceeded, execution /
//                    canceled / unavailable / internal kUnavailable, not_found kNotFound
//   other non-2xx -> StatusFromHttp (5xx kUnavailable, 4xx kInvalid, ...)
//   malformed, truncated, too big or too deeply nested JSON -> kInvalid, saying where it broke.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace aiscale::monitor {

// Label name/value pairs in the order Prometheus sent them (it sends them sorted).
using PromLabels = std::vector<std::pair<std::string, std::string>>;

struct PromSeries {
  PromLabels labels;
  double timestamp_s = 0;  // Unix seconds, as Prometheus reports it
  double value = 0;        // may be NaN or +-Inf
  // The value of label `name`, or nullptr when the series has no such label.
  const std::string* Label(std::string_view name) const;
};

struct PromQueryResult {
  std::string result_type;  // "vector", "matrix", "scalar" or "string"
  std::vector<PromSeries> series;
  std::vector<std::string> warnings;  // non-fatal problems Prometheus reported
  int skipped = 0;  // series with no float sample (native histograms, empty matrix rows)
};

struct PromParseLimits {
  size_t max_bytes = 64u * 1024u * 1024u;  // larger bodies are rejected before parsing
  int max_depth = 16;                      // a real response nests 5 deep; more is hostile
};

// Parses a response body received with HTTP status `http_status`.
Result<PromQueryResult> ParsePromQueryResponse(std::string_view body, int http_status = 200,
                                               const PromParseLimits& limits = {});

// The Status for a Prometheus error envelope ("errorType: error", coded as above).
Status StatusFromPromError(std::string_view error_type, std::string_view message, int http_status);

// Parses a Prometheus sample value string: a decimal or exponent number, "NaN", "+Inf",
// "-Inf" (also "Inf"). False when `s` is anything else.
bool ParsePromValue(std::string_view s, double& out);

}  // namespace aiscale::monitor
