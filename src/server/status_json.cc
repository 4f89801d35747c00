#include "server/status_json.h"

#include <cmath>

#include "server/conditions.h"

namespace aiscale::server {
namespace {

nlohmann::json NumberOrNull(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json WallOrNull(WallTime t) {
  const std::string s = FormatWallTime(t);
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

}  // namespace

nlohmann::json SteeringJson(const Steering& s) {
  if (s.mode == SteerMode::kNone) return {{"mode", "none"}};
  nlohmann::json j = {{"mode", SteerModeName(s.mode)},
                      {"source", SteerSourceName(s.source)},
                      {"since", WallOrNull(s.since)},
                      {"until", WallOrNull(s.until)},
                      {"description", s.Describe()}};
  if (s.mode == SteerMode::kPaused) j["direction"] = PauseDirectionName(s.direction);
  if (s.mode == SteerMode::kPinned) j["replicas"] = s.replicas;
  return j;
}

void AddStatusFields(const WorkloadView& w, nlohmann::json& j) {
  j["min_replicas"] = w.min_replicas;
  j["max_replicas"] = w.max_replicas;
  j["steering"] = SteeringJson(w.steering);
  nlohmann::json conditions = nlohmann::json::array();
  for (const Condition& c : ConditionsOf(w)) {
    conditions.push_back({{"type", c.type},
                          {"status", c.status ? "True" : "False"},
                          {"reason", c.reason},
                          {"message", c.message}});
  }
  j["conditions"] = std::move(conditions);
  j["rule"] = w.last ? nlohmann::json(w.last->recommendation.rule) : nlohmann::json(nullptr);
  j["rule_since"] =
      w.rule_since_s > 0 ? WallOrNull(WallTime(Seconds(w.rule_since_s))) : nlohmann::json(nullptr);
  j["rule_since_s"] = w.rule_since_s > 0 ? nlohmann::json(w.rule_since_s) : nlohmann::json(nullptr);
  nlohmann::json signals = nlohmann::json::array();
  for (const SignalView& s : w.signals) {
    const bool ok = s.status == SignalStatus::kOk;
    signals.push_back({{"name", s.name},
                       {"value", ok ? NumberOrNull(s.value) : nlohmann::json(nullptr)},
                       {"target", NumberOrNull(SignalTarget(w, s.name))},
                       {"status", SignalStatusName(s.status)},
                       {"age_s", s.age_s >= 0 ? nlohmann::json(s.age_s) : nlohmann::json(nullptr)},
                       {"source", s.source}});
  }
  j["signal_status"] = std::move(signals);
}

}  // namespace aiscale::server
