#include "core/decision.h"

#include <sstream>

namespace aiscale {

std::string_view ActionName(Action a) {
  switch (a) {
    case Action::kNone:
      return "none";
    case Action::kScaled:
      return "scaled";
    case Action::kFailed:
      return "failed";
  }
  return "unknown";
}

std::string Decision::UnchangedText() const {
  if (unchanged_ticks <= 0) return "";
  std::ostringstream os;
  os << "unchanged for " << unchanged_ticks << " tick" << (unchanged_ticks == 1 ? "" : "s")
     << " since ";
  const std::string since = FormatWallTime(WallTime(wall.time_since_epoch() - unchanged_for));
  if (wall.time_since_epoch().count() != 0 && !since.empty()) {
    os << since;
  } else {
    os << "t=" << SinceEpochSeconds(at - unchanged_for) << "s";
  }
  return os.str();
}

std::string Decision::Summary() const {
  std::ostringstream os;
  const std::string when = FormatWallTime(wall);
  os << workload;
  if (when.empty()) {
    os << " t=" << SinceEpochSeconds(at) << "s ";
  } else {
    os << " " << when << " ";
  }
  if (unchanged_ticks > 0) os << "(" << UnchangedText() << ") ";
  os << policy << ": current=" << current << " ready=" << ready
     << " recommended=" << recommendation.desired << (recommendation.valid ? "" : " (invalid)")
     << " [" << recommendation.rule << "] " << recommendation.reason
     << "; stabilized=" << stabilized;
  if (!stabilize_reason.empty()) os << " (" << stabilize_reason << ")";
  os << "; constrained=" << constrained;
  if (!constrain_reason.empty()) os << " (" << constrain_reason << ")";
  if (pool.active) {
    os << "; pool (tenant " << pool.tenant << "): wanted=" << pool.wanted
       << " granted=" << pool.granted << " [" << pool.reason << "]";
    if (!pool.detail.empty()) os << " " << pool.detail;
  }
  os << "; action=" << ActionName(action);
  if (!action_detail.empty()) os << " (" << action_detail << ")";
  for (const auto& in : inputs) {
    if (in.status != SignalStatus::kOk) {
      os << "; " << in.name << " " << SignalStatusName(in.status) << ": " << in.detail;
    }
  }
  return os.str();
}

nlohmann::json ToJson(const Decision& d) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& in : d.inputs) {
    nlohmann::json j = {{"name", in.name}, {"status", SignalStatusName(in.status)}};
    if (HasValues(in.status)) {
      j["value"] = in.value;
      j["sum"] = in.sum;
      j["instances"] = in.instances;
    }
    if (!in.detail.empty()) j["detail"] = in.detail;
    inputs.push_back(std::move(j));
  }
  nlohmann::json facts = nlohmann::json::object();
  for (const auto& [k, v] : d.recommendation.facts) facts[k] = v;
  nlohmann::json j = {{"workload", d.workload},
                      {"policy", d.policy},
                      {"t_s", SinceEpochSeconds(d.at)},
                      {"current", d.current},
                      {"ready", d.ready},
                      {"inputs", inputs},
                      {"recommended", d.recommendation.desired},
                      {"valid", d.recommendation.valid},
                      {"rule", d.recommendation.rule},
                      {"reason", d.recommendation.reason},
                      {"facts", facts},
                      {"stabilized", d.stabilized},
                      {"stabilize_reason", d.stabilize_reason},
                      {"constrained", d.constrained},
                      {"constrain_reason", d.constrain_reason},
                      {"action", ActionName(d.action)},
                      {"action_detail", d.action_detail}};
  // Only the daemon stamps wall time; simulator logs stay free of it (and byte-identical).
  if (!d.engine_detail.empty()) j["engine_detail"] = d.engine_detail;
  // The warm tier, only where there is one (logs without it stay byte-identical).
  if (d.asleep > 0 || d.recommendation.asleep >= 0) {
    j["asleep"] = d.asleep;
    j["asleep_wanted"] = d.recommendation.asleep;
  }
  if (d.pool.active) {
    j["pool"] = {{"tenant", d.pool.tenant},
                 {"wanted", d.pool.wanted},
                 {"granted", d.pool.granted},
                 {"reason", d.pool.reason},
                 {"detail", d.pool.detail}};
  }
  if (d.action == Action::kFailed) j["action_code"] = StatusCodeName(d.action_code);
  if (d.wall.time_since_epoch().count() != 0) {
    j["wall_s"] = ToSeconds(d.wall.time_since_epoch());
  }
  if (d.unchanged_ticks > 0) {
    j["unchanged_ticks"] = d.unchanged_ticks;
    j["unchanged_for_s"] = ToSeconds(d.unchanged_for);
  }
  return j;
}

}  // namespace aiscale
