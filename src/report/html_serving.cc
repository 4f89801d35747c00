// report.html's serving section (report/html_sections.h).
#include <algorithm>
#include <cmath>

#include "report/format.h"
#include "report/html_sections.h"

namespace aiscale::report::html {
namespace {

std::string Meta(const RunViews& runs) {
  const WorkloadSummary& w = *runs.front().w;
  std::string m;
  if (w.serving) {
    const ServiceLevel& slo = w.serving->slo;
    if (!std::isnan(slo.attainment)) {
      m += "SLO: TTFT &le; " + FormatShort(slo.ttft_s) + " s and latency &le; " +
           FormatShort(slo.latency_s) + " s for " + FormatShort(100 * slo.attainment) +
           "% of requests. ";
    }
    if (!std::isnan(w.serving->cold_start_s)) {
      m += "Cold start " + FormatFixed(w.serving->cold_start_s, 0) + " s. ";
    }
    if (w.serving->static_peak_replicas) {
      m += "static-peak size " + std::to_string(*w.serving->static_peak_replicas) + " replicas. ";
    }
    if (!w.serving->trace.empty()) m += "Trace: " + EscapeHtml(w.serving->trace) + ". ";
  }
  if (!w.oracle && !w.oracle_error.empty()) m += "No oracle: " + EscapeHtml(w.oracle_error) + ".";
  return m.empty() ? "" : "<p class=\"meta\">" + m + "</p>";
}

std::string Legend(const RunViews& runs, bool plan) {
  std::string h = "<div class=\"legend\" data-legend=\"policies\">";
  for (const RunView& r : runs) {
    h += Toggle("policy", r.run->label,
                "<span " + Attr("data-policy", r.run->label) + ">" + Swatch(Colour(r.index)) +
                    EscapeHtml(r.run->label) + "</span>");
  }
  h += Toggle("kind", "ready", LineKey("#444", "", 5) + "ready") +
       Toggle("kind", "desired", LineKey("#444", "5 3") + "desired");
  if (plan) h += Toggle("kind", "oracle", LineKey(kGrey, "") + "oracle's plan");
  return h + "<span>" + LineKey(kRed, "2 3") + "SLO bound</span></div>";
}

// Ready wide and pale under desired, dashed and narrow, so desired shows where they agree.
void AddReplicaSeries(const RunView& r, const std::string& chart, SvgChart& c) {
  const std::string who = Attr("data-chart", chart) + " " + Attr("data-policy", r.run->label);
  c.AddSeries({Points(r.w->timeline, &TimelinePoint::ready), Colour(r.index), false, true,
               who + " data-kind=\"ready\"", r.run->label + " ready", 5, 0.35});
  c.AddSeries({Points(r.w->timeline, &TimelinePoint::desired), Colour(r.index), true, true,
               who + " data-kind=\"desired\"", r.run->label + " desired", 1.5, 1});
}

std::string Overlay(SvgChart c, const RunViews& runs, const char* chart, const std::string& title,
                    double TimelinePoint::*field, bool zero_is_gap, double slo = kNoValue) {
  for (const RunView& r : runs) {
    c.AddSeries({Points(r.w->timeline, field, zero_is_gap), Colour(r.index), false, false,
                 Attr("data-chart", chart) + " " + Attr("data-policy", r.run->label), r.run->label,
                 1.5, 1});
  }
  if (!std::isnan(slo)) {
    c.AddHLine(slo, kRed, "SLO " + FormatShort(slo) + " s",
               Attr("data-chart", chart) + " data-ref=\"slo\"");
  }
  return Plot(title, c.Svg());
}

// A log axis for a latency chart: from the smallest positive value (or the SLO) to the largest.
SvgChart LatencyAxis(const RunViews& runs, double TimelinePoint::*field, double t_max, double slo) {
  double lo = slo, hi = std::isnan(slo) ? 0 : slo;
  for (const RunView& r : runs) {
    for (const TimelinePoint& p : r.w->timeline) {
      const double v = p.*field;
      if (!(v > 0)) continue;
      lo = std::isnan(lo) ? v : std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return SvgChart::Log(t_max, std::isnan(lo) ? 0.1 : std::max(lo, 1e-3), hi);
}

std::string ReplicasOverlay(const RunViews& runs, const std::vector<ChartPoint>& plan,
                            double t_max) {
  double plan_max = 0;
  for (const ChartPoint& p : plan) plan_max = std::max(plan_max, p.v);
  SvgChart rep(t_max, std::max({MaxOf(runs, &TimelinePoint::desired),
                                MaxOf(runs, &TimelinePoint::ready), plan_max}) +
                          1);
  if (!plan.empty()) {
    rep.AddSeries({plan, kGrey, false, true, "data-kind=\"oracle\"", "oracle", 1.5, 1});
  }
  for (const RunView& r : runs) AddReplicaSeries(r, "replicas", rep);
  return Plot(std::string("Replicas, every run on one scale: ready (wide, pale) and desired ") +
                  "(dashed)" + (plan.empty() ? "" : "; the oracle's plan in grey"),
              rep.Svg());
}

// One chart per run on its own scale, so one run's spike does not flatten the others.
std::string ReplicasPerRun(const RunViews& runs, const std::vector<ChartPoint>& plan,
                           double t_max) {
  std::string h =
      "<h3>Replicas per run, each on its own scale; &#9660; a rescale (hover for "
      "its reason)</h3><div class=\"runs\">";
  for (const RunView& r : runs) {
    double top = std::max(MaxOf(r.w->timeline, &TimelinePoint::desired),
                          MaxOf(r.w->timeline, &TimelinePoint::ready));
    for (const ChartPoint& p : plan) top = std::max(top, p.v);
    SvgChart c(t_max, top + 1, 620, 170);
    if (!plan.empty()) {
      c.AddSeries({plan, kGrey, false, true, "data-kind=\"oracle\"", "oracle", 1, 0.8});
    }
    AddReplicaSeries(r, "replicas-run", c);
    AddDecisionMarkers(*r.run, r.w->name, c);
    h += "<div class=\"run\"><h3 class=\"policy\">" + Swatch(Colour(r.index)) +
         EscapeHtml(r.run->label) + "</h3>" + c.Svg() + "</div>";
  }
  return h + "</div>";
}

}  // namespace

std::string ServingSection(const ComparisonTable& table, const RunViews& runs, bool with_static) {
  const WorkloadSummary& first = *runs.front().w;
  const std::vector<ChartPoint> plan =
      first.oracle ? PlanPoints(first.oracle->plan) : std::vector<ChartPoint>{};
  std::string h = Meta(runs) + TableHtml(table) + VerdictsHtml(runs, with_static) +
                  "<h3>Over time</h3>" + Legend(runs, !plan.empty());
  const double t_max = TMax(runs);
  h += Overlay(SvgChart(t_max, 1.05 * MaxOf(runs, &TimelinePoint::request_rate)), runs, "demand",
               "Demand: requests/s arriving (the same arrivals for every run, so the lines lie "
               "on each other)",
               &TimelinePoint::request_rate, false);
  h += ReplicasOverlay(runs, plan, t_max) + ReplicasPerRun(runs, plan, t_max);
  const double slo_lat = first.serving ? first.serving->slo.latency_s : kNoValue;
  const double slo_ttft = first.serving ? first.serving->slo.ttft_s : kNoValue;
  // Timelines with per-interval p99s (every completion in exactly one point) are drawn from
  // those; older ones from the signals' window before each point.
  const bool per_interval =
      !first.timeline.empty() && !std::isnan(first.timeline.back().interval_latency_p99_s);
  auto lat = per_interval ? &TimelinePoint::interval_latency_p99_s : &TimelinePoint::latency_p99_s;
  auto ttft = per_interval ? &TimelinePoint::interval_ttft_p99_s : &TimelinePoint::ttft_p99_s;
  const std::string span = per_interval
                               ? "completed since the previous report point"
                               : "completed in the metrics window before each report point";
  h += Overlay(
      LatencyAxis(runs, lat, t_max, slo_lat), runs, "latency",
      "p99 end-to-end latency (s, log scale) of the requests " + span + "; gaps: none completed",
      lat, true, slo_lat);
  h += Overlay(LatencyAxis(runs, ttft, t_max, slo_ttft), runs, "ttft",
               "p99 time to first token (s, log scale), same spans", ttft, true, slo_ttft);
  return h;
}

}  // namespace aiscale::report::html
