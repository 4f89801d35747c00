#include "sim/inference_verdict.h"

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

const nlohmann::json* FindRun(const std::vector<nlohmann::json>& runs, const std::string& name) {
  for (const auto& r : runs) {
    if (r.value("policy", "") == name) return &r;
  }
  return nullptr;
}

}  // namespace

double MissesDuringColdStart(const nlohmann::json& run) {
  const auto it = run.find("timeline");
  if (it == run.end() || !it->is_array() || it->size() < 2) return 0;
  double total = 0, cold = 0;
  for (size_t i = 1; i < it->size(); ++i) {
    const auto& a = (*it)[i - 1];
    const auto& b = (*it)[i];
    const double d = Num(b, "missed") - Num(a, "missed");
    if (d <= 0) continue;
    total += d;
    // Either end of the interval short of ready replicas: capacity was asked for and coming.
    if (Num(a, "ready") < Num(a, "desired") || Num(b, "ready") < Num(b, "desired")) cold += d;
  }
  return total > 0 ? cold / total : 0;
}

nlohmann::json InferenceVerdict(const nlohmann::json& run,
                                const std::vector<nlohmann::json>& runs) {
  if (!run.contains("oracle_gpu_hours") || !run.contains("slo_attainment")) return nullptr;
  const std::string name = run.value("policy", "");
  const double g = Num(run, "gpu_hours"), a = Num(run, "slo_attainment");
  const double og = Num(run, "oracle_gpu_hours");
  const double want_a = run.contains("slo") ? Num(run["slo"], "attainment") : 0.99;
  nlohmann::json targets = nlohmann::json::array();
  std::string why;
  auto add = [&](const std::string& t, double measured, double target, bool met,
                 const std::string& miss) {
    targets.push_back({{"name", t}, {"measured", measured}, {"target", target}, {"met", met}});
    if (!met) why += (why.empty() ? "" : "; ") + miss;
  };
  const double ratio = og > 0 ? g / og : 0;
  add("gpu_hours_over_oracle", ratio, 1.15, og > 0 && ratio <= 1.15,
      "GPU-hours " + Fmt("%.2f", ratio) + "x the oracle (target <= 1.15x, over by " +
          Fmt("%.1f", g - 1.15 * og) + " GPU-hours)");
  const double cold = MissesDuringColdStart(run);
  add("slo_attainment", a, want_a, a >= want_a,
      "SLO attainment " + Fmt("%.4f", a) + " (target " + Fmt("%.2f", want_a) + ", short by " +
          Fmt("%.0f", (want_a - a) * Num(run, "requests")) + " requests); " +
          Fmt("%.0f", 100 * cold) + "% of its misses fell while replicas it had asked for were " +
          "still starting (cold start), " + Fmt("%.0f", 100 * (1 - cold)) +
          "% with all of them ready (sized too small for the burst)");
  // Every hpa and kpa run (a scenario may compare several configurations of each).
  for (const auto& o_run : runs) {
    const std::string kind = o_run.value("policy_name", o_run.value("policy", ""));
    const std::string label = o_run.value("policy", "");
    if ((kind != "hpa" && kind != "kpa") || label == name) continue;
    const nlohmann::json* o = &o_run;
    const std::string other = label;
    const double og2 = Num(*o, "gpu_hours"), oa = Num(*o, "slo_attainment");
    add("gpu_hours_vs_" + other, og2 > 0 ? g / og2 : 0, 1, g <= og2,
        "GPU-hours " + Fmt("%.2f", og2 > 0 ? g / og2 : 0) + "x " + other + " (" + other +
            " attains " + Fmt("%.4f", oa) + ")");
    add("slo_vs_" + other, a - oa, 0, a >= oa,
        "SLO attainment " + Fmt("%.4f", oa - a) + " below " + other + "'s");
  }
  if (const nlohmann::json* sp = FindRun(runs, "static-peak"); sp && name != "static-peak") {
    const double gs = Num(*sp, "gpu_hours");
    const double saved = gs > 0 ? 1 - g / gs : 0;
    add("fewer_gpu_hours_than_static_peak", saved, 0.30, saved >= 0.30,
        (saved >= 0 ? Fmt("%.0f", 100 * saved) + "% fewer" : Fmt("%.0f", -100 * saved) + "% more") +
            " GPU-hours than static-peak (target >= 30% fewer)");
  }
  bool all = true;
  for (const auto& t : targets) all = all && t["met"].get<bool>();
  nlohmann::json v = {{"targets", targets}, {"met_all", all}};
  if (!run.value("oracle_feasible", true)) {
    v["oracle_note"] =
        "some requests miss the SLO at any size; the oracle meets the target share "
        "of the achievable ones (attainment " +
        Fmt("%.4f", Num(run, "oracle_attainment")) + ")";
  }
  if (!all) v["why_not"] = why;
  return v;
}

}  // namespace aiscale::sim
