#include "report/serving_verdict.h"

#include <cmath>

#include "report/format.h"
#include "report/verdict_builder.h"

namespace aiscale::report {
namespace {

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }
double Or0(double v) { return std::isnan(v) ? 0 : v; }

std::optional<double> AttainmentBar(const WorkloadSummary& w, const Targets& t) {
  if (t.slo_from_service) {
    const double a = w.serving->slo.attainment;
    return std::isnan(a) ? 0.99 : a;
  }
  return t.slo_attainment;
}

void AddAttainment(const WorkloadSummary& w, double bar, VerdictBuilder& out) {
  const ServingFigures& s = *w.serving;
  const double a = Or0(s.slo_attainment);
  const double cold = MissesDuringColdStart(w.timeline);
  out.Add({"slo_attainment", a, bar, a >= bar, {}, {}},
          "SLO attainment " + FormatFixed(a, 4) + " (target " + FormatFixed(bar, 2) +
              ", short by " + FormatFixed((bar - a) * static_cast<double>(s.requests), 0) +
              " requests); " + FormatFixed(100 * cold, 0) +
              "% of its misses fell while replicas it had asked for were still starting (cold "
              "start), " +
              FormatFixed(100 * (1 - cold), 0) +
              "% with all of them ready (sized too small for the burst)");
}

// GPU-hours and attainment against every run of the policies named in no_worse_than.
void AddPeers(const WorkloadSummary& w, const std::string& label, const std::vector<PeerRun>& peers,
              const Targets& t, VerdictBuilder& out) {
  const double g = w.gpu_hours, a = Or0(w.serving->slo_attainment);
  for (const PeerRun& p : peers) {
    if (p.label == label || p.workload == nullptr || !p.workload->serving) continue;
    bool named = false;
    for (const std::string& n : t.no_worse_than) named = named || n == p.policy;
    if (!named) continue;
    const double pg = p.workload->gpu_hours, pa = Or0(p.workload->serving->slo_attainment);
    out.Add({"gpu_hours_vs_" + p.label, Ratio(g, pg), 1, g <= pg, {}, {}},
            "GPU-hours " + FormatFixed(Ratio(g, pg), 2) + "x " + p.label + " (" + p.label +
                " attains " + FormatFixed(pa, 4) + ")");
    out.Add({"slo_vs_" + p.label, a - pa, 0, a >= pa, {}, {}},
            "SLO attainment " + FormatFixed(pa - a, 4) + " below " + p.label + "'s");
  }
}

void AddStaticPeak(const WorkloadSummary& w, const std::vector<PeerRun>& peers, double bar,
                   VerdictBuilder& out) {
  for (const PeerRun& p : peers) {
    if (p.baseline != Baseline::kStaticPeak || p.workload == nullptr) continue;
    const double saved = p.workload->gpu_hours > 0 ? 1 - w.gpu_hours / p.workload->gpu_hours : 0;
    out.Add({"fewer_gpu_hours_than_static_peak", saved, bar, saved >= bar, {}, {}},
            (saved >= 0 ? FormatFixed(100 * saved, 0) + "% fewer"
                        : FormatFixed(-100 * saved, 0) + "% more") +
                " GPU-hours than static-peak (target >= " + FormatFixed(100 * bar, 0) + "% fewer)");
    return;
  }
}

}  // namespace

double MissesDuringColdStart(const std::vector<TimelinePoint>& timeline) {
  double total = 0, cold = 0;
  for (size_t i = 1; i < timeline.size(); ++i) {
    const TimelinePoint& a = timeline[i - 1];
    const TimelinePoint& b = timeline[i];
    const double d = b.missed - a.missed;
    if (!(d > 0)) continue;
    total += d;
    // Either end of the interval short of ready replicas: capacity was asked for and coming.
    if (a.ready < a.desired || b.ready < b.desired) cold += d;
  }
  return total > 0 ? cold / total : 0;
}

std::optional<Verdict> JudgeServing(const WorkloadSummary& w, const std::string& label,
                                    const std::vector<PeerRun>& peers, const Targets& t) {
  if (!w.serving || !w.oracle) return std::nullopt;
  const OracleFigures& o = *w.oracle;
  VerdictBuilder out;
  if (t.gpu_hours_over_oracle) {
    const double bar = *t.gpu_hours_over_oracle;
    const double ratio = Ratio(w.gpu_hours, o.gpu_hours);
    out.Add({"gpu_hours_over_oracle", ratio, bar, o.gpu_hours > 0 && ratio <= bar, {}, {}},
            "GPU-hours " + FormatFixed(ratio, 2) +
                "x the oracle (target <= " + FormatFixed(bar, 2) + "x, over by " +
                FormatFixed(w.gpu_hours - bar * o.gpu_hours, 1) + " GPU-hours)");
  }
  if (const std::optional<double> bar = AttainmentBar(w, t)) AddAttainment(w, *bar, out);
  AddPeers(w, label, peers, t, out);
  if (t.fewer_gpu_hours_than_static_peak) {
    AddStaticPeak(w, peers, *t.fewer_gpu_hours_than_static_peak, out);
  }
  if (out.empty()) return std::nullopt;
  Verdict v = std::move(out).Done();
  if (!o.feasible) {
    v.oracle_note =
        "some requests miss the SLO at any size; the oracle meets the target share of the "
        "achievable ones (attainment " +
        FormatFixed(o.attainment, 4) + ")";
  }
  return v;
}

}  // namespace aiscale::report
