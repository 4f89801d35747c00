#include "server/json_views.h"

#include <cmath>
#include <ctime>

#include "server/status_json.h"

namespace aiscale::server {
namespace {

// The workload's identity and scale, shared by the list and the detail.
nlohmann::json Identity(const WorkloadView& w) {
  return {{"key", w.ref.Key()},   {"name", w.ref.name}, {"namespace", w.ref.namespace_},
          {"kind", w.ref.kind},   {"policy", w.policy}, {"engine", w.engine},
          {"current", w.current}, {"ready", w.ready},   {"desired", w.desired},
          {"state", w.state}};
}

nlohmann::json WallJson(const Decision& d) {
  const std::string wall = FormatWallTime(d.wall);
  return wall.empty() ? nlohmann::json(nullptr) : nlohmann::json(wall);
}

}  // namespace

nlohmann::json WorkloadSummaryJson(const WorkloadView& w) {
  nlohmann::json j = Identity(w);
  AddStatusFields(w, j);
  if (!w.last) {
    j["last_decision"] = nullptr;
    j["last_decision_time"] = nullptr;
    return j;
  }
  const Decision& d = *w.last;
  j["last_decision"] = {
      {"t_s", SinceEpochSeconds(d.at)},  {"recommended", d.recommendation.desired},
      {"valid", d.recommendation.valid}, {"rule", d.recommendation.rule},
      {"action", ActionName(d.action)},  {"summary", d.Summary()}};
  j["last_decision_time"] = WallJson(d);
  return j;
}

nlohmann::json SignalJson(const SignalView& s) {
  nlohmann::json j = {{"name", s.name},
                      {"source", s.source},
                      {"status", SignalStatusName(s.status)},
                      {"instances", s.instances}};
  // A value that is not data is absent, not 0: a reader must not mistake it for a reading.
  j["value"] = HasValues(s.status) && std::isfinite(s.value) ? nlohmann::json(s.value)
                                                             : nlohmann::json(nullptr);
  j["sum"] =
      HasValues(s.status) && std::isfinite(s.sum) ? nlohmann::json(s.sum) : nlohmann::json(nullptr);
  j["age_s"] = s.age_s >= 0 ? nlohmann::json(s.age_s) : nlohmann::json(nullptr);
  j["detail"] = s.detail;
  return j;
}

nlohmann::json WorkloadDetailJson(const WorkloadView& w) {
  nlohmann::json j = Identity(w);
  AddStatusFields(w, j);
  j["last_decision"] = w.last ? ToJson(*w.last) : nlohmann::json(nullptr);
  j["last_decision_time"] = w.last ? WallJson(*w.last) : nlohmann::json(nullptr);
  nlohmann::json signals = nlohmann::json::array();
  for (const SignalView& s : w.signals) signals.push_back(SignalJson(s));
  j["signals"] = std::move(signals);
  return j;
}

nlohmann::json DecisionListJson(const std::string& key, const std::vector<Decision>& decisions) {
  nlohmann::json list = nlohmann::json::array();
  for (const Decision& d : decisions) list.push_back(ToJson(d));
  return {{"workload", key}, {"count", decisions.size()}, {"decisions", std::move(list)}};
}

std::string_view ReasonOf(int http_status) {
  switch (http_status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 422:
      return "Invalid";
    case 405:
      return "MethodNotAllowed";
    case 408:
      return "RequestTimeout";
    case 411:
      return "LengthRequired";
    case 413:
      return "PayloadTooLarge";
    case 431:
      return "RequestHeaderFieldsTooLarge";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    default:
      return "Error";
  }
}

nlohmann::json PoolJson(const PoolView& p) {
  nlohmann::json tenants = nlohmann::json::array();
  for (const TenantView& t : p.tenants) {
    tenants.push_back({{"name", t.name},
                       {"guaranteed", t.guaranteed},
                       {"borrow_limit",
                        t.borrow_limit ? nlohmann::json(*t.borrow_limit) : nlohmann::json(nullptr)},
                       {"weight", t.weight},
                       {"wanted", t.wanted},
                       {"granted", t.granted},
                       {"borrowed", t.borrowed}});
  }
  const nlohmann::json unknown(nullptr);
  return {{"known", p.known},
          {"gpus", p.known ? nlohmann::json(p.gpus) : unknown},
          {"granted", p.granted},
          {"idle", p.known ? nlohmann::json(p.gpus - p.granted) : unknown},
          {"reclaimed", p.reclaimed},
          {"detail", p.detail},
          {"tenants", std::move(tenants)}};
}

nlohmann::json ErrorJson(int http_status, std::string_view message) {
  return {
      {"error", {{"code", http_status}, {"reason", ReasonOf(http_status)}, {"message", message}}}};
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace aiscale::server
