#include "monitor/promql_response.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/http.h"

namespace aiscale::monitor {
namespace {

using nlohmann::json;

// A short, printable excerpt of a body for error messages (an HTML error page, say).
std::string Excerpt(std::string_view body, size_t max = 200) {
  std::string out;
  for (char c : body.substr(0, max)) {
    out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  if (body.size() > max) out += "...";
  return out.empty() ? "(empty body)" : out;
}

// Rejects bodies nested deeper than `max_depth` before the DOM parser sees them, so a hostile
// "[[[[..." costs one linear scan and no deep structures.
Status CheckDepth(std::string_view s, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return Status::Invalid("malformed prometheus response: JSON nested deeper than " +
                               std::to_string(max_depth) + " levels at byte " + std::to_string(i));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return Status::Ok();
}

Status Malformed(const std::string& what) {
  return Status::Invalid("malformed prometheus response: " + what);
}

// Unix seconds; bounded so that converting to int64 nanoseconds cannot overflow.
bool ToTimestamp(const json& j, double& out) {
  constexpr double kMaxAbs = 9e9;  // the year 2255
  if (j.is_number()) {
    out = j.get<double>();
  } else if (!j.is_string() || !ParsePromValue(j.get_ref<const std::string&>(), out)) {
    return false;
  }
  return std::isfinite(out) && std::abs(out) < kMaxAbs;
}

// [<unix_time>, "<sample_value>"]
Status ReadSample(const json& pair, const std::string& where, double& ts, double& value) {
  if (!pair.is_array() || pair.size() != 2) {
    return Malformed(where + " is not a [timestamp, \"value\"] pair");
  }
  if (!ToTimestamp(pair[0], ts)) return Malformed(where + " has a bad timestamp");
  const json& v = pair[1];
  if (v.is_string()) {
    if (ParsePromValue(v.get_ref<const std::string&>(), value)) return Status::Ok();
    return Malformed(where + " has a non-numeric value '" +
                     Excerpt(v.get_ref<const std::string&>()) + "'");
  }
  if (v.is_number()) {  // not Prometheus itself, but some compatible backends
    value = v.get<double>();
    return Status::Ok();
  }
  return Malformed(where + " has a value that is neither a string nor a number");
}

Status ReadLabels(const json& el, const std::string& where, PromLabels& out) {
  auto it = el.find("metric");
  if (it == el.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return Malformed(where + ".metric is not an object");
  out.reserve(it->size());
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) return Malformed(where + ".metric." + k + " is not a string");
    out.emplace_back(k, v.get<std::string>());
  }
  return Status::Ok();
}

// One element of a vector ("value") or matrix ("values", newest point wins).
Status ReadSeries(const json& el, size_t i, bool matrix, PromQueryResult& out) {
  const std::string where = "data.result[" + std::to_string(i) + "]";
  if (!el.is_object()) return Malformed(where + " is not an object");
  PromSeries s;
  RETURN_IF_ERROR(ReadLabels(el, where, s.labels));
  if (!matrix) {
    auto v = el.find("value");
    if (v == el.end()) {  // a native histogram sample has "histogram" instead
      ++out.skipped;
      return Status::Ok();
    }
    RETURN_IF_ERROR(ReadSample(*v, where + ".value", s.timestamp_s, s.value));
    out.series.push_back(std::move(s));
    return Status::Ok();
  }
  auto vs = el.find("values");
  if (vs == el.end() || (vs->is_array() && vs->empty())) {
    ++out.skipped;
    return Status::Ok();
  }
  if (!vs->is_array()) return Malformed(where + ".values is not an array");
  s.timestamp_s = -std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < vs->size(); ++k) {
    double ts = 0, value = 0;
    RETURN_IF_ERROR(ReadSample((*vs)[k], where + ".values[" + std::to_string(k) + "]", ts, value));
    if (ts >= s.timestamp_s) s.timestamp_s = ts, s.value = value;
  }
  out.series.push_back(std::move(s));
  return Status::Ok();
}

Status ReadData(const json& root, PromQueryResult& out) {
  auto data = root.find("data");
  if (data == root.end() || !data->is_object()) return Malformed("no data object");
  auto type = data->find("resultType");
  if (type == data->end() || !type->is_string()) return Malformed("no data.resultType");
  out.result_type = type->get<std::string>();
  auto result = data->find("result");
  if (result == data->end()) return Malformed("no data.result");
  if (out.result_type == "vector" || out.result_type == "matrix") {
    if (result->is_null()) return Status::Ok();
    if (!result->is_array()) return Malformed("data.result is not an array");
    out.series.reserve(result->size());
    for (size_t i = 0; i < result->size(); ++i) {
      RETURN_IF_ERROR(ReadSeries((*result)[i], i, out.result_type == "matrix", out));
    }
    return Status::Ok();
  }
  if (out.result_type == "scalar" || out.result_type == "string") {
    PromSeries s;
    RETURN_IF_ERROR(ReadSample(*result, "data.result", s.timestamp_s, s.value));
    out.series.push_back(std::move(s));
    return Status::Ok();
  }
  return Malformed("unknown data.resultType '" + Excerpt(out.result_type) + "'");
}

void ReadWarnings(const json& root, PromQueryResult& out) {
  auto w = root.find("warnings");
  if (w == root.end() || !w->is_array()) return;
  for (const json& s : *w) {
    if (s.is_string()) out.warnings.push_back(s.get<std::string>());
  }
}

std::string StringField(const json& root, const char* key) {
  auto it = root.find(key);
  return (it != root.end() && it->is_string()) ? it->get<std::string>() : std::string();
}

Result<PromQueryResult> FromJson(const json& root, std::string_view body, int http_status) {
  if (!root.is_object()) {
    if (http_status < 200 || http_status >= 300) return StatusFromHttp(http_status, Excerpt(body));
    return Malformed("top level is not an object");
  }
  const std::string status = StringField(root, "status");
  if (status == "error") {
    return StatusFromPromError(StringField(root, "errorType"), StringField(root, "error"),
                               http_status);
  }
  if (http_status < 200 || http_status >= 300) return StatusFromHttp(http_status, Excerpt(body));
  if (status != "success") return Malformed("status is '" + Excerpt(status) + "'");
  PromQueryResult out;
  RETURN_IF_ERROR(ReadData(root, out));
  ReadWarnings(root, out);
  return out;
}

}  // namespace

const std::string* PromSeries::Label(std::string_view name) const {
  for (const auto& [k, v] : labels) {
    if (k == name) return &v;
  }
  return nullptr;
}

bool ParsePromValue(std::string_view s, double& out) {
  if (s == "NaN") return out = std::numeric_limits<double>::quiet_NaN(), true;
  if (s == "+Inf" || s == "Inf") return out = std::numeric_limits<double>::infinity(), true;
  if (s == "-Inf") return out = -std::numeric_limits<double>::infinity(), true;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);  // from_chars takes no '+'
  if (s.empty() || s.front() == '+') return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out, std::chars_format::general);
  return ec == std::errc() && ptr == end;
}

Status StatusFromPromError(std::string_view error_type, std::string_view message, int http_status) {
  const std::string type = error_type.empty() ? "error" : std::string(error_type);
  const std::string m =
      "prometheus answered HTTP " + std::to_string(http_status) + " " + type + ": " +
      (message.empty() ? "(no message)" : Excerpt(message, 1024));  // the why comes last
  if (error_type == "bad_data") return Status::Invalid(m);
  if (error_type == "timeout") return Status::DeadlineExceeded(m);
  if (error_type == "not_found") return Status::NotFound(m);
  if (error_type == "execution" || error_type == "canceled" || error_type == "unavailable" ||
      error_type == "internal") {
    return Status::Unavailable(m);
  }
  // An unknown type: the HTTP status is the best hint; a 2xx error envelope is still an error.
  const Status by_http = StatusFromHttp(http_status, m);
  return by_http.ok() ? Status::Unavailable(m) : Status::FromCode(by_http.code(), m);
}

Result<PromQueryResult> ParsePromQueryResponse(std::string_view body, int http_status,
                                               const PromParseLimits& limits) {
  if (body.size() > limits.max_bytes) {
    return Malformed("body of " + std::to_string(body.size()) + " bytes exceeds the limit of " +
                     std::to_string(limits.max_bytes));
  }
  if (Status st = CheckDepth(body, limits.max_depth); !st.ok()) return st;
  json root;
  try {
    root = json::parse(body.begin(), body.end());
  } catch (const json::exception& e) {
    // A proxy's HTML error page is not malformed JSON but an HTTP error.
    if (http_status < 200 || http_status >= 300) return StatusFromHttp(http_status, Excerpt(body));
    return Malformed(std::string("invalid JSON: ") + e.what());
  }
  try {
    return FromJson(root, body, http_status);
  } catch (const json::exception& e) {  // a type assumption the checks above missed
    return Malformed(std::string("unexpected JSON shape: ") + e.what());
  }
}

}  // namespace aiscale::monitor
