#include "cli/status_format.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "server/html.h"

namespace aiscale::cli {
namespace {

using Json = nlohmann::json;
using Row = std::vector<std::string>;

std::string Str(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "-";
  const Json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return server::ShortNumber(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return "-";
}

double Num(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

std::string Signals(const Json& w) {
  std::string out;
  if (!w.contains("signal_status") || !w["signal_status"].is_array()) return "-";
  for (const Json& s : w["signal_status"]) {
    const std::string status = Str(s, "status");
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "<" + string.
    if (!out.empty()) out += ", ";
    out += Str(s, "name");
    out += ": ";
    if (status == "ok") {
      out += Str(s, "value");
    } else {
      out += '<';
      out += status;
      out += '>';
    }
    const double target = Num(s, "target");
    if (std::isfinite(target)) {
      out += '/';
      out += server::ShortNumber(target);
    }
  }
  return out.empty() ? "-" : out;
}

// The conditions not in their normal state (ScalingLimited is normal when False).
std::string Conditions(const Json& w) {
  std::string out;
  if (!w.contains("conditions") || !w["conditions"].is_array()) return "-";
  for (const Json& c : w["conditions"]) {
    const std::string type = Str(c, "type");
    const bool is_true = Str(c, "status") == "True";
    const bool normal = type == "ScalingLimited" || type == "Paused" ? !is_true : is_true;
    if (normal) continue;
    out +=
        (out.empty() ? "" : ", ") + type + (is_true ? "" : "=False") + "(" + Str(c, "reason") + ")";
  }
  return out.empty() ? "OK" : out;
}

std::string Table(const std::vector<Row>& rows) {
  std::vector<size_t> width;
  for (const Row& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const Row& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 3, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string Age(double now_s, double since_s) {
  return std::isfinite(since_s) ? server::AgeText(now_s - since_s) : "-";
}

}  // namespace

std::string StatusTable(const Json& list, double now_s) {
  std::vector<Row> rows = {{"NAME", "ENGINE", "POLICY", "SIGNALS (current/target)", "MIN", "MAX",
                            "DESIRED", "CURRENT", "READY", "RULE", "AGE", "CONDITIONS"}};
  if (list.is_object() && list.contains("workloads") && list["workloads"].is_array()) {
    for (const Json& w : list["workloads"]) {
      rows.push_back({Str(w, "key"), Str(w, "engine"), Str(w, "policy"), Signals(w),
                      Str(w, "min_replicas"), Str(w, "max_replicas"), Str(w, "desired"),
                      Str(w, "current"), Str(w, "ready"), Str(w, "rule"),
                      Age(now_s, Num(w, "rule_since_s")), Conditions(w)});
    }
  }
  return Table(rows);
}

std::string DescribeText(const Json& w, const Json& decisions, double now_s) {
  std::ostringstream os;
  const Json steering = w.contains("steering") ? w["steering"] : Json::object();
  os << "Name:            " << Str(w, "key") << "\n"
     << "Kind:            " << Str(w, "kind") << "\n"
     << "Engine:          " << Str(w, "engine") << "\n"
     << "Policy:          " << Str(w, "policy") << "\n"
     << "Min replicas:    " << Str(w, "min_replicas") << "\n"
     << "Max replicas:    " << Str(w, "max_replicas") << "\n"
     << "Replicas:        " << Str(w, "current") << " current / " << Str(w, "desired")
     << " desired / " << Str(w, "ready") << " ready\n"
     << "Override:        "
     << (Str(steering, "mode") == "none" || Str(steering, "mode") == "-"
             ? "none"
             : Str(steering, "description"))
     << "\n"
     << "Last rule:       " << Str(w, "rule") << " (for " << Age(now_s, Num(w, "rule_since_s"))
     << ")\n";
  const Json last = w.contains("last_decision") ? w["last_decision"] : Json();
  // The shared pool's part of the decision (Decision.pool: tenant, wanted, granted, reason,
  // detail), when the workload is in one.
  const Json pool = last.is_object() && last.contains("pool") ? last["pool"] : Json();
  if (pool.is_object() && pool.contains("granted")) {
    const std::string detail = Str(pool, "detail");
    os << "Pool:            tenant " << Str(pool, "tenant") << ": wanted " << Str(pool, "wanted")
       << ", granted " << Str(pool, "granted") << " (" << Str(pool, "reason")
       << (detail.empty() || detail == "-" ? "" : ": " + detail) << ")\n";
  }
  std::vector<Row> cond = {{"  Type", "Status", "Reason", "Message"}};
  if (w.contains("conditions") && w["conditions"].is_array()) {
    for (const Json& c : w["conditions"]) {
      cond.push_back(
          {"  " + Str(c, "type"), Str(c, "status"), Str(c, "reason"), Str(c, "message")});
    }
  }
  os << "Conditions:\n" << Table(cond);
  std::vector<Row> sig = {{"  Signal", "Value", "Target", "Status", "Age", "Source"}};
  if (w.contains("signal_status") && w["signal_status"].is_array()) {
    for (const Json& s : w["signal_status"]) {
      const double age = Num(s, "age_s");
      sig.push_back({"  " + Str(s, "name"), Str(s, "value"), Str(s, "target"), Str(s, "status"),
                     std::isfinite(age) ? server::AgeText(age) : "-", Str(s, "source")});
    }
  }
  os << "Signals:\n" << Table(sig);
  std::vector<Row> log = {{"  Time", "Scale", "Rule", "Reason", "Limit", "Action"}};
  if (decisions.is_object() && decisions.contains("decisions") &&
      decisions["decisions"].is_array()) {
    for (const Json& d : decisions["decisions"]) {
      std::string limit = Str(d, "constrain_reason");
      if (limit == "-" || limit.empty()) limit = Str(d, "stabilize_reason");
      log.push_back({"  " + Age(now_s, Num(d, "wall_s")) + " ago",
                     Str(d, "current") + "->" + Str(d, "constrained"), Str(d, "rule"),
                     Str(d, "reason"), limit.empty() ? "-" : limit, Str(d, "action")});
    }
  }
  os << "Recent decisions (newest first):\n" << Table(log);
  return os.str();
}

}  // namespace aiscale::cli
