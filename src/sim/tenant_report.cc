#include "sim/tenant_report.h"

#include <algorithm>
#include <string>

namespace aiscale::sim {
namespace {

constexpr const char* kKind = "GpuDemand";

double Num(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

// The longest wait (`to_grant_s` or `to_ready_s`) among a tenant's lent guarantee episodes.
double LentMax(const nlohmann::json& figures, const char* which) {
  const auto it = figures.find("guarantee_waits");
  if (it == figures.end()) return 0;
  return Num((*it)["lent"][which], "max");
}

nlohmann::json TenantFigures(const nlohmann::json& w) {
  nlohmann::json out = {{"demand_gpu_minutes", Num(w, "demand_gpu_minutes")},
                        {"held_gpu_minutes", Num(w, "held_gpu_minutes")},
                        {"pending_gpu_minutes", Num(w, "pending_gpu_minutes")},
                        {"starting_gpu_minutes", Num(w, "starting_gpu_minutes")},
                        {"reclaimed_gpus", Num(w, "reclaimed_gpus")},
                        {"reclaimed_gpu_minutes", Num(w, "reclaimed_gpu_minutes")},
                        {"lent_wait_to_grant_s", LentMax(w, "to_grant_s")},
                        {"lent_wait_to_ready_s", LentMax(w, "to_ready_s")}};
  if (w.contains("guaranteed_gpus")) out["guaranteed_gpus"] = w["guaranteed_gpus"];
  if (w.contains("guarantee_waits")) {
    out["guarantee_waits"] = w["guarantee_waits"];
    out["lent_episodes"] = w["guarantee_waits"].value("lent_episodes", 0);
    out["unfinished_waits"] = w["guarantee_waits"].value("unfinished", 0);
  }
  return out;
}

nlohmann::json RunFigures(const RunResult& run) {
  nlohmann::json tenants = nlohmann::json::object();
  double pending = 0, held = 0, demand = 0, reclaimed = 0, grant = 0, ready = 0;
  for (const WorkloadRun& w : run.workloads) {
    if (w.summary.kind != kKind || !w.figures.is_object()) continue;
    const nlohmann::json f = TenantFigures(w.figures);
    pending += Num(f, "pending_gpu_minutes");
    held += Num(f, "held_gpu_minutes");
    demand += Num(f, "demand_gpu_minutes");
    reclaimed += Num(f, "reclaimed_gpu_minutes");
    grant = std::max(grant, Num(f, "lent_wait_to_grant_s"));
    ready = std::max(ready, Num(f, "lent_wait_to_ready_s"));
    tenants[w.name] = f;
  }
  return {{"label", run.policy},
          {"role", run.role},
          {"tenants", tenants},
          {"pending_gpu_minutes", pending},
          {"held_gpu_minutes", held},
          {"demand_gpu_minutes", demand},
          {"reclaimed_gpu_minutes", reclaimed},
          {"lent_wait_to_grant_s", grant},
          {"lent_wait_to_ready_s", ready},
          {"pool_utilization", run.pool.is_null() ? 0.0 : Num(run.pool, "utilization")}};
}

const RunResult* ByRole(const ScenarioResult& r, const char* role) {
  for (const RunResult& run : r.runs) {
    if (run.role == role) return &run;
  }
  return nullptr;
}

nlohmann::json Target(const std::string& what, double value, double goal, bool met) {
  return {{"target", what}, {"value", value}, {"goal", goal}, {"met", met}};
}

// The longest restart among the tenants (a lender's restart, whichever lent).
double LongestRestart(const Scenario& s) {
  double longest = 0;
  for (const ScenarioWorkload& w : s.workloads) {
    if (w.kind == kKind) longest = std::max(longest, w.spec.cold_start_s);
  }
  return longest;
}

bool HasTenants(const Scenario& s) {
  return std::any_of(s.workloads.begin(), s.workloads.end(),
                     [](const ScenarioWorkload& w) { return w.kind == kKind; });
}

}  // namespace

nlohmann::json TenantComparison(const Scenario& s, const ScenarioResult& r) {
  const RunResult* pool = ByRole(r, "pool");
  if (!s.pool || !pool || !HasTenants(s)) return nullptr;
  nlohmann::json runs = nlohmann::json::array();
  for (const RunResult& run : r.runs) runs.push_back(RunFigures(run));
  const nlohmann::json mine = RunFigures(*pool);
  nlohmann::json targets = nlohmann::json::array();
  if (const RunResult* quotas = ByRole(r, "static_quotas")) {
    const double base = Num(RunFigures(*quotas), "pending_gpu_minutes");
    const double ratio = base > 0 ? Num(mine, "pending_gpu_minutes") / base : 0;
    targets.push_back(Target("pending GPU-minutes / static quotas", ratio, 0.5, ratio <= 0.5));
  }
  const double period = s.control_period_s, restart = LongestRestart(s);
  const double grant = Num(mine, "lent_wait_to_grant_s");
  const double ready = Num(mine, "lent_wait_to_ready_s");
  targets.push_back(Target("guarantee granted back (s, longest)", grant, period, grant <= period));
  targets.push_back(Target("guarantee ready again (s, longest)", ready, period + restart,
                           ready <= period + restart));
  // Stated, not judged: the issue asks for the figure, not a bound on it.
  nlohmann::json reclaimed =
      Target("reclaimed GPU-minutes", Num(mine, "reclaimed_gpu_minutes"), 0, true);
  reclaimed["stated"] = true;
  reclaimed.erase("goal");
  targets.push_back(std::move(reclaimed));
  return {{"pool_gpus", s.pool->size.value_or(0)},
          {"control_period_s", period},
          {"restart_s", restart},
          {"runs", runs},
          {"targets", targets}};
}

}  // namespace aiscale::sim
