// report.html's training section (report/html_sections.h).
#include <algorithm>
#include <utility>

#include "report/format.h"
#include "report/html_sections.h"

namespace aiscale::report::html {
namespace {

constexpr const char* kDesired = "#1f77b4";
constexpr const char* kReady = "#2ca02c";

std::string Legend() {
  return "<div class=\"legend\" data-legend=\"phases\"><span>" + Swatch("#f7dcaa") +
         "load</span><span>" + Swatch("#ffffff") + "compute</span><span>" + Swatch("#dccbf2") +
         "eval</span><span>" + Swatch("#cfcfcf") + "restarting</span><span>" +
         LineKey(kRed, "4 2") + "node failure</span><span>&#9660; rescale (hover: why)</span>" +
         Toggle("kind", "desired", LineKey(kDesired, "5 3") + "desired / value") +
         Toggle("kind", "ready", LineKey(kReady, "", 5) + "ready") +
         Toggle("kind", "oracle", LineKey(kGrey, "") + "oracle's plan") + "</div>";
}

// Load and eval phases and restarts as background bands, merged where equal.
void PhaseBands(const std::vector<TimelinePoint>& tl, SvgChart& c) {
  auto fill = [](const TimelinePoint& p) -> const char* {
    if (p.restarting > 0) return "#cfcfcf";
    return p.phase == 0 ? "#f7dcaa" : p.phase == 2 ? "#dccbf2" : nullptr;
  };
  size_t i = 0;
  while (i + 1 < tl.size()) {
    const char* f = fill(tl[i]);
    size_t j = i + 1;
    while (j + 1 < tl.size() && fill(tl[j]) == f) ++j;
    if (f) c.AddBand(tl[i].t_s, tl[j].t_s, f);
    i = j;
  }
}

struct SeriesSpec {
  double TimelinePoint::*field;
  const char* kind;
  const char* colour;
  const char* label;
};

std::string RunCharts(const RunView& r, double t_max) {
  const std::vector<TimelinePoint>& tl = r.w->timeline;
  const std::string who = Attr("data-policy", r.run->label);
  const std::vector<ChartPoint> plan =
      r.w->oracle ? PlanPoints(r.w->oracle->plan) : std::vector<ChartPoint>{};
  auto chart = [&](const char* name, const std::string& title, double y_max,
                   const std::vector<SeriesSpec>& series, bool nodes) {
    SvgChart c(t_max, y_max, 620, 170);
    PhaseBands(tl, c);
    if (nodes && !plan.empty()) {
      c.AddSeries({plan, kGrey, false, true, "data-kind=\"oracle\"", "oracle's plan", 1.5, 1});
    }
    for (const SeriesSpec& s : series) {
      const bool ready = std::string_view(s.kind) == "ready";
      c.AddSeries({Points(tl, s.field), s.colour, nodes && !ready, true,
                   Attr("data-chart", name) + " " + who + " " + Attr("data-kind", s.kind), s.label,
                   ready ? 5 : 1.5, ready ? 0.4 : 1});
    }
    for (const RunEvent& e : r.w->events) {
      if (e.kind == RunEvent::Kind::kFailure) c.AddVLine(e.t_s, kRed, "data-event=\"failure\"");
    }
    if (nodes) AddDecisionMarkers(*r.run, r.w->name, c);
    return Plot(title, c.Svg());
  };
  double n_max = std::max(MaxOf(tl, &TimelinePoint::desired), MaxOf(tl, &TimelinePoint::ready));
  for (const ChartPoint& p : plan) n_max = std::max(n_max, p.v);
  return "<div class=\"run\"><h3 class=\"policy\">" + EscapeHtml(r.run->label) + "</h3>" +
         chart("nodes",
               "nodes: desired (dashed) over ready (wide)" +
                   std::string(plan.empty() ? "" : "; the oracle's plan in grey"),
               n_max + 1,
               {{&TimelinePoint::ready, "ready", kReady, "ready"},
                {&TimelinePoint::desired, "desired", kDesired, "desired"}},
               true) +
         chart("gpu_util", "GPU utilization of allocated GPUs (%)", 100,
               {{&TimelinePoint::gpu_util, "gpu_util", kDesired, "GPU util %"}}, false) +
         chart("samples", "samples/s", 1.1 * MaxOf(tl, &TimelinePoint::samples_per_s),
               {{&TimelinePoint::samples_per_s, "samples_per_s", kDesired, "samples/s"}}, false) +
         "</div>";
}

}  // namespace

std::string TrainingSection(const ComparisonTable& table, const RunViews& runs, bool with_static) {
  std::string h = TableHtml(table) + VerdictsHtml(runs, with_static) + Legend();
  const double t_max = TMax(runs);
  h += "<p class=\"meta\">Each run on its own scale (so one run's spike does not flatten the "
       "others), on one time axis.</p><div class=\"runs\">";
  for (const RunView& r : runs) h += RunCharts(r, t_max);
  return h + "</div>";
}

}  // namespace aiscale::report::html
