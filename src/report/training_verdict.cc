#include "report/training_verdict.h"

#include <string>

#include "report/format.h"
#include "report/verdict_builder.h"

namespace aiscale::report {
namespace {

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

// The seed figures: required only where the oracle (same model) reaches them.
void AddSeedTargets(const WorkloadSummary& w, const WorkloadSummary& st, const Targets& t,
                    VerdictBuilder& out) {
  const OracleFigures& o = *w.oracle;
  auto seed = [&](const char* name, double measured, double target, bool met, double oracle,
                  bool oracle_met, const std::string& miss) {
    TargetResult r{name, measured, target, met, oracle_met, oracle};
    out.Add(std::move(r), miss + (oracle_met ? ""
                                             : " (not required: the oracle reaches only " +
                                                   FormatFixed(oracle, 3) + ")"));
  };
  if (t.seed_gpu_hours_vs_static) {
    const double bar = *t.seed_gpu_hours_vs_static;
    const double gr = Ratio(w.gpu_hours, st.gpu_hours);
    const double o_ratio = Ratio(o.gpu_hours, o.static_gpu_hours);
    seed("seed_gpu_hours_vs_static", gr, bar, gr <= bar, o_ratio, o_ratio > 0 && o_ratio <= bar,
         "GPU-hours " + FormatFixed(gr, 3) + "x static (seed: " + FormatFixed(bar, 2) + "x)");
  }
  if (t.seed_mean_gpu_util) {
    const double bar = *t.seed_mean_gpu_util;
    seed("seed_mean_gpu_util", w.mean_gpu_util, bar, w.mean_gpu_util >= bar, o.mean_gpu_util,
         o.mean_gpu_util >= bar,
         "mean GPU util " + FormatFixed(w.mean_gpu_util, 3) + " (seed: " + FormatFixed(bar, 2) +
             ")");
  }
  if (t.seed_speed_vs_static) {
    const double bar = *t.seed_speed_vs_static;
    const double speed = Ratio(st.completion_time_s, w.completion_time_s);
    const double o_speed = Ratio(o.static_completion_time_s, o.completion_time_s);
    seed("seed_speed_vs_static", speed, bar, speed >= bar, o_speed, o_speed >= bar,
         "speed " + FormatFixed(speed, 3) + " of static (seed: " + FormatFixed(bar, 2) + ")");
  }
}

}  // namespace

std::optional<Verdict> JudgeTraining(const WorkloadSummary& w, const WorkloadSummary* static_w,
                                     const Targets& t) {
  if (!w.training || !w.oracle) return std::nullopt;
  const OracleFigures& o = *w.oracle;
  VerdictBuilder out;
  if (t.gpu_hours_over_oracle) {
    const double bar = *t.gpu_hours_over_oracle;
    const double ratio = Ratio(w.gpu_hours, o.gpu_hours);
    out.Add({"gpu_hours_over_oracle", ratio, bar, o.gpu_hours > 0 && ratio <= bar, {}, {}},
            "GPU-hours " + FormatFixed(ratio, 3) +
                "x the oracle (target <= " + FormatFixed(bar, 2) + "x, over by " +
                FormatFixed(w.gpu_hours - bar * o.gpu_hours, 1) + " GPU-hours)");
  }
  if (t.rescales_per_hour) {
    // The policy's own rescales: replacing a failed node is not one (its budget does not pay).
    const double bar = *t.rescales_per_hour;
    const double rph = Ratio(w.training->policy_rescales, w.completion_time_s / 3600);
    out.Add({"rescales_per_hour", rph, bar, rph <= bar, {}, {}},
            FormatFixed(rph, 2) + " rescales per hour, failure replacements not counted " +
                "(target <= " + FormatShort(bar) + ")");
  }
  if (t.failure_replaced_s) {
    const double bar = *t.failure_replaced_s, rep = w.max_failure_replacement_s;
    out.Add({"failure_replaced_s", rep, bar, rep <= bar, {}, {}},
            "a failed node took " + FormatFixed(rep, 0) +
                " s to replace (target <= " + FormatShort(bar) + " s)");
  }
  if (static_w != nullptr) {
    if (t.completion_vs_static) {
      const double bar = *t.completion_vs_static;
      const double cr = Ratio(w.completion_time_s, static_w->completion_time_s);
      out.Add(
          {"completion_vs_static", cr, bar, static_w->completion_time_s > 0 && cr <= bar, {}, {}},
          "completion " + FormatFixed(cr, 3) + "x static (target <= " + FormatFixed(bar, 2) + "x)");
    }
    AddSeedTargets(w, *static_w, t, out);
  }
  if (out.empty()) return std::nullopt;
  Verdict v = std::move(out).Done();
  if (!o.feasible) {
    v.oracle_note = "the oracle is infeasible: " + (o.note.empty() ? "-" : o.note);
  } else {
    v.oracle_note = o.note;
  }
  return v;
}

}  // namespace aiscale::report
