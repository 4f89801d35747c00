#include "sim/training_verdict.h"

#include <cstdio>
#include <string>

#include "sim/json_fields.h"

namespace aiscale::sim {
namespace {

double Num(const nlohmann::json& j, const char* k) { return NumberOr(j, k, 0.0); }

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

constexpr double kMaxCompletionRatio = 1.10;
constexpr double kMaxRescalesPerHour = 1.0;
constexpr double kMaxReplacementS = 600;
// The seed's figures against static.
constexpr double kSeedGpuHoursRatio = 0.70;
constexpr double kSeedUtil = 0.80;
constexpr double kSeedSpeed = 0.90;

}  // namespace

double TrainingOracleTolerance(std::string_view scenario) {
  return scenario.rfind("demo", 0) == 0 ? 1.05 : 1.10;
}

nlohmann::json TrainingVerdict(const nlohmann::json& run, const std::vector<nlohmann::json>& runs,
                               std::string_view scenario) {
  if (!run.contains("oracle_gpu_hours") || run.contains("slo_attainment")) return nullptr;
  const std::string name = run.value("policy", "");
  const nlohmann::json* st = nullptr;
  for (const auto& r : runs) {
    if (r.value("policy", "") == "static") st = &r;
  }
  if (name == "static") return nullptr;
  const double g = Num(run, "gpu_hours"), og = Num(run, "oracle_gpu_hours");
  const double t = Num(run, "completion_time_s");
  nlohmann::json targets = nlohmann::json::array();
  std::string why;
  auto add = [&](const std::string& n, double measured, double target, bool met, bool required,
                 const std::string& miss, nlohmann::json oracle = nullptr) {
    nlohmann::json e = {{"name", n},
                        {"measured", measured},
                        {"target", target},
                        {"met", met},
                        {"required", required}};
    if (!oracle.is_null()) e["oracle"] = oracle;
    targets.push_back(e);
    if (!met && required) why += (why.empty() ? "" : "; ") + miss;
  };
  const double tol = TrainingOracleTolerance(scenario);
  const double ratio = og > 0 ? g / og : 0;
  add("gpu_hours_over_oracle", ratio, tol, og > 0 && ratio <= tol, true,
      "GPU-hours " + Fmt("%.3f", ratio) + "x the oracle (target <= " + Fmt("%.2f", tol) +
          "x, over by " + Fmt("%.1f", g - tol * og) + " GPU-hours)");
  // The policy's own rescales: replacing a failed node is not one (its budget does not pay).
  const double hours = t / 3600;
  const double chosen =
      run.contains("policy_rescales") ? Num(run, "policy_rescales") : Num(run, "rescales");
  const double rph = hours > 0 ? chosen / hours : 0;
  add("rescales_per_hour", rph, kMaxRescalesPerHour, rph <= kMaxRescalesPerHour, true,
      Fmt("%.2f", rph) + " rescales per hour, failure replacements not counted (target <= 1)");
  const double rep = Num(run, "max_failure_replacement_s");
  add("failure_replaced_s", rep, kMaxReplacementS, rep <= kMaxReplacementS, true,
      "a failed node took " + Fmt("%.0f", rep) + " s to replace (target <= 600 s)");
  if (st) {
    const double gs = Num(*st, "gpu_hours"), ts = Num(*st, "completion_time_s");
    const double cr = ts > 0 ? t / ts : 0;
    add("completion_vs_static", cr, kMaxCompletionRatio, ts > 0 && cr <= kMaxCompletionRatio, true,
        "completion " + Fmt("%.3f", cr) + "x static (target <= 1.10x)");
    // The seed's figures: required where the oracle (same model) reaches them.
    const double ogs = Num(run, "oracle_static_gpu_hours");
    const double o_ratio = ogs > 0 ? og / ogs : 0;
    const double o_util = Num(run, "oracle_mean_gpu_util");
    const double oc = Num(run, "oracle_completion_time_s");
    const double o_speed = oc > 0 ? Num(run, "oracle_static_completion_time_s") / oc : 0;
    const double gr = gs > 0 ? g / gs : 0;
    const double util = Num(run, "mean_gpu_util");
    const double speed = t > 0 ? ts / t : 0;
    auto seed = [&](const char* n, double measured, double target, bool met, double oracle,
                    bool oracle_met, const std::string& miss) {
      add(n, measured, target, met, oracle_met,
          miss + (oracle_met
                      ? ""
                      : " (not required: the oracle reaches only " + Fmt("%.3f", oracle) + ")"),
          oracle);
    };
    seed("seed_gpu_hours_vs_static", gr, kSeedGpuHoursRatio, gr <= kSeedGpuHoursRatio, o_ratio,
         o_ratio <= kSeedGpuHoursRatio, "GPU-hours " + Fmt("%.3f", gr) + "x static (seed: 0.70x)");
    seed("seed_mean_gpu_util", util, kSeedUtil, util >= kSeedUtil, o_util, o_util >= kSeedUtil,
         "mean GPU util " + Fmt("%.3f", util) + " (seed: 0.80)");
    seed("seed_speed_vs_static", speed, kSeedSpeed, speed >= kSeedSpeed, o_speed,
         o_speed >= kSeedSpeed, "speed " + Fmt("%.3f", speed) + " of static (seed: 0.90)");
  }
  bool all = true;
  for (const auto& e : targets) all = all && (e["met"].get<bool>() || !e["required"].get<bool>());
  nlohmann::json v = {{"targets", targets}, {"met_all", all}};
  if (!run.value("oracle_feasible", true)) {
    v["oracle_note"] = "the oracle is infeasible: " + run.value("oracle_note", std::string("-"));
  } else if (run.contains("oracle_note")) {
    v["oracle_note"] = run["oracle_note"];
  }
  if (!all) v["why_not"] = why;
  return v;
}

}  // namespace aiscale::sim
