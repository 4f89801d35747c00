#include "sim/traces/mooncake_trace.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/numeric.h"
#include "core/strict_json.h"
#include "sim/traces/csv_fields.h"
#include "sim/traces/line_trace_stream.h"

namespace aiscale::sim::traces {
namespace {

// A row that is not JSON because of one value ({"timestamp": 1.2.3, ...}) is reported at that
// value's field, like the CSV loaders' "unparsable number". `byte` is where the parser
// stopped (1-based). Nothing when the break is not inside a value after a key.
std::optional<Status> BrokenFieldError(std::string_view line, size_t byte,
                                       const std::string& where) {
  const std::string_view before = line.substr(0, std::min(line.size(), byte));
  const size_t colon = before.rfind(':');
  if (colon == std::string_view::npos || colon == 0 ||
      before.find_first_of(",{}", colon) != std::string_view::npos) {
    return std::nullopt;
  }
  const size_t close = before.find_last_not_of(' ', colon - 1);
  if (close == std::string_view::npos || close == 0 || before[close] != '"') return std::nullopt;
  const size_t open = before.rfind('"', close - 1);
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view value = line.substr(colon + 1);
  value = value.substr(0, value.find_first_of(",}"));
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  const bool numeric =
      !value.empty() && (value.front() == '-' || (value.front() >= '0' && value.front() <= '9'));
  std::string shown(value.substr(0, 40));  // a hostile value may be a megabyte long
  if (value.size() > 40) shown += "...";
  return FieldError(
      where, before.substr(open + 1, close - open - 1),
      std::string(numeric ? "unparsable number '" : "unparsable value '") + shown + "'");
}

class MooncakeStream final : public LineTraceStream {
 public:
  explicit MooncakeStream(std::string path)
      : LineTraceStream(std::move(path), Format::kJsonLines, false, "timestamp") {}

 protected:
  Status ParseHeader(std::string_view, const std::string&) override { return Status::Ok(); }
  Status ParseRow(std::string_view line, const std::string& where, TraceRequest& req) override {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      if (auto named = BrokenFieldError(line, e.byte, where)) return *named;
      return Status::Error(where + ": not a JSON object: " + e.what());
    } catch (const nlohmann::json::exception& e) {
      return Status::Error(where + ": not a JSON object: " + e.what());
    }
    // Valid JSON: parse again strictly, refusing a repeated key (the plain parser keeps the
    // last value) and deep nesting. Only valid rows pay for the second pass's bookkeeping.
    if (auto strict = ParseStrictJson(line); !strict.ok()) {
      return Status::Error(where + ": " + strict.status().message());
    }
    if (!j.is_object()) return Status::Error(where + ": not a JSON object");
    auto number = [&](const char* field, double& out) -> Status {
      const auto it = j.find(field);
      if (it == j.end()) return FieldError(where, field, "missing field");
      if (!it->is_number()) return FieldError(where, field, "not a number: " + it->dump());
      out = it->get<double>();
      if (!std::isfinite(out) || out < 0) {
        return FieldError(where, field, "must be a finite number >= 0, got " + it->dump());
      }
      return Status::Ok();
    };
    double ts_ms = 0, in = 0, out = 0;
    RETURN_IF_ERROR(number("timestamp", ts_ms));
    RETURN_IF_ERROR(number("input_length", in));
    RETURN_IF_ERROR(number("output_length", out));
    // Token counts are whole numbers; a fraction is refused rather than truncated.
    for (const auto& [field, v] :
         {std::pair{"input_length", in}, std::pair{"output_length", out}}) {
      if (v != std::floor(v)) {
        return FieldError(where, field, "must be a whole number of tokens, got " + j[field].dump());
      }
    }
    if (in > 4e9 || out > 4e9) return FieldError(where, "input_length", "too large");
    // Arrivals are int64 nanoseconds; 1e12 ms (31 years) keeps them far from wrapping.
    if (ts_ms > 1e12) {
      return FieldError(where, "timestamp",
                        "must be at most 1e12 ms (31 years), got " + std::to_string(ts_ms));
    }
    req.arrival_ns = SaturatingToInt64(std::round(ts_ms * 1e6));
    req.input_tokens = static_cast<uint32_t>(in);
    req.output_tokens = std::max<uint32_t>(1, static_cast<uint32_t>(out));
    return Status::Ok();
  }
};

class MooncakeSource final : public RequestSource {
 public:
  explicit MooncakeSource(std::string path) : path_(std::move(path)) {}
  Result<std::unique_ptr<RequestStream>> Open() const override {
    return std::unique_ptr<RequestStream>(std::make_unique<MooncakeStream>(path_));
  }
  std::string Describe() const override { return "mooncake_fast25 " + path_; }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<RequestSource> MooncakeTrace(std::string path) {
  return std::make_unique<MooncakeSource>(std::move(path));
}

}  // namespace aiscale::sim::traces
