#include "core/decision_codec.h"

#include <cmath>
#include <limits>
#include <string>

namespace aiscale {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// nlohmann writes NaN as null, so null reads back as NaN.
double NumberOrNaN(const nlohmann::json& v) { return v.is_number() ? v.get<double>() : kNaN; }

}  // namespace

Result<SignalStatus> SignalStatusFromName(std::string_view name) {
  for (SignalStatus s : {SignalStatus::kOk, SignalStatus::kMissing, SignalStatus::kStale,
                         SignalStatus::kInvalid, SignalStatus::kFetchFailed}) {
    if (SignalStatusName(s) == name) return s;
  }
  return Status::Error("unknown signal status '" + std::string(name) + "'");
}

Result<Action> ActionFromName(std::string_view name) {
  for (Action a : {Action::kNone, Action::kScaled, Action::kFailed}) {
    if (ActionName(a) == name) return a;
  }
  return Status::Error("unknown action '" + std::string(name) + "'");
}

Result<StatusCode> StatusCodeFromName(std::string_view name) {
  for (StatusCode c :
       {StatusCode::kOk, StatusCode::kNotFound, StatusCode::kConflict, StatusCode::kUnavailable,
        StatusCode::kDeadlineExceeded, StatusCode::kInvalid, StatusCode::kPermissionDenied,
        StatusCode::kInternal}) {
    if (StatusCodeName(c) == name) return c;
  }
  return Status::Invalid("unknown status code '" + std::string(name) + "'");
}

Result<Decision> DecisionFromJson(const nlohmann::json& j) {
  // nlohmann's typed access throws on a type mismatch; keep that inside this function.
  try {
    if (!j.is_object()) return Status::Error("unable to decode decision: not a JSON object");
    Decision d;
    d.workload = j.at("workload").get<std::string>();
    d.policy = j.at("policy").get<std::string>();
    d.at = TimePoint(Duration(std::llround(j.at("t_s").get<double>() * 1e9)));
    if (j.contains("wall_s")) {
      d.wall = WallTime(Duration(std::llround(j.at("wall_s").get<double>() * 1e9)));
    }
    d.current = j.at("current").get<int>();
    d.ready = j.at("ready").get<int>();
    for (const auto& in : j.at("inputs")) {
      SignalInput s;
      s.name = in.at("name").get<std::string>();
      ASSIGN_OR_RETURN(s.status, SignalStatusFromName(in.at("status").get<std::string>()));
      if (in.contains("value")) s.value = NumberOrNaN(in["value"]);
      if (in.contains("sum")) s.sum = NumberOrNaN(in["sum"]);
      if (in.contains("instances")) s.instances = in["instances"].get<int>();
      if (in.contains("detail")) s.detail = in["detail"].get<std::string>();
      d.inputs.push_back(std::move(s));
    }
    d.recommendation.desired = j.at("recommended").get<int>();
    d.recommendation.valid = j.at("valid").get<bool>();
    d.recommendation.rule = j.at("rule").get<std::string>();
    d.recommendation.reason = j.at("reason").get<std::string>();
    for (const auto& [k, v] : j.at("facts").items()) {
      d.recommendation.facts.emplace_back(k, NumberOrNaN(v));
    }
    d.stabilized = j.at("stabilized").get<int>();
    d.stabilize_reason = j.at("stabilize_reason").get<std::string>();
    d.constrained = j.at("constrained").get<int>();
    d.constrain_reason = j.at("constrain_reason").get<std::string>();
    ASSIGN_OR_RETURN(d.action, ActionFromName(j.at("action").get<std::string>()));
    d.action_detail = j.at("action_detail").get<std::string>();
    if (j.contains("engine_detail")) d.engine_detail = j["engine_detail"].get<std::string>();
    if (j.contains("action_code")) {
      ASSIGN_OR_RETURN(d.action_code, StatusCodeFromName(j["action_code"].get<std::string>()));
    }
    return d;
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(std::string("unable to decode decision: ") + e.what());
  }
}

nlohmann::json StateToJson(const PersistentState& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, vec] : s.values) {
    nlohmann::json arr = nlohmann::json::array();
    for (double v : vec) {
      if (std::isfinite(v)) {
        arr.push_back(v);
      } else if (std::isnan(v)) {
        arr.push_back("NaN");
      } else {
        arr.push_back(v > 0 ? "Infinity" : "-Infinity");
      }
    }
    j[k] = std::move(arr);
  }
  return j;
}

Result<PersistentState> StateFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::Error("unable to decode state: not a JSON object");
  PersistentState s;
  for (const auto& [k, arr] : j.items()) {
    if (!arr.is_array()) {
      return Status::Error("unable to decode state: '" + k + "' is not an array");
    }
    std::vector<double>& vec = s.values[k];
    vec.reserve(arr.size());
    for (const auto& v : arr) {
      if (v.is_number() || v.is_null()) {
        vec.push_back(NumberOrNaN(v));
      } else if (v == "NaN") {
        vec.push_back(kNaN);
      } else if (v == "Infinity" || v == "-Infinity") {
        const double inf = std::numeric_limits<double>::infinity();
        vec.push_back(v == "Infinity" ? inf : -inf);
      } else {
        return Status::Error("unable to decode state: '" + k + "' holds a non-number");
      }
    }
  }
  return s;
}

}  // namespace aiscale
