#include "sim/oracle_statement.h"

#include <cstdio>

#include "sim/json_fields.h"

namespace aiscale::sim {
namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string OracleStatement(const nlohmann::json& run) {
  if (!run.is_object() || !run.contains("oracle_gpu_hours")) return "";
  std::string s = "oracle (lower bound, docs/oracle.md): ";
  s += Fixed(NumberOr(run, "oracle_gpu_hours", 0.0), 2);
  s += " GPU-hours = max(interval bound ";
  s += Fixed(NumberOr(run, "oracle_interval_gpu_hours", 0.0), 2);
  s += ", work bound ";
  s += Fixed(NumberOr(run, "oracle_work_gpu_hours", 0.0), 2);
  s += "); its own plan serves ";
  s += Fixed(NumberOr(run, "oracle_attainment", 0.0), 4);
  s += " of requests within the SLO";
  const double unservable = NumberOr(run, "oracle_unservable", 0.0);
  const double requests = NumberOr(run, "requests", 0.0);
  if (!run.value("oracle_feasible", true)) {
    s += "; the target is out of reach for any policy (";
  } else {
    s += "; the target is feasible (";
  }
  s += Fixed(unservable, 0) + " of " + Fixed(requests, 0) + " requests miss it at any size)";
  return s;
}

}  // namespace aiscale::sim
