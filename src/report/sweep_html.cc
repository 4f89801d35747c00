#include "report/sweep_html.h"

#include <algorithm>
#include <cmath>

#include "report/format.h"
#include "report/html_parts.h"
#include "report/svg_chart.h"

namespace aiscale::report {
namespace {

// The share of requests that missed, kept off zero so a log axis can draw it.
constexpr double kMissFloor = 1e-4;

double Miss(const SweepPoint& p) { return std::max(kMissFloor, 1 - p.slo_attainment); }

std::string Chart(const Sweep& s) {
  double x_max = 0, y_min = 1, y_max = kMissFloor;
  for (const SweepFamily& f : s.families) {
    for (const SweepPoint& p : f.points) {
      if (!HasFigures(p)) continue;
      x_max = std::max(x_max, p.gpu_hours);
      y_min = std::min(y_min, Miss(p));
      y_max = std::max(y_max, Miss(p));
    }
  }
  SvgChart c = SvgChart::ValuesLog(x_max, y_min, y_max);
  for (size_t i = 0; i < s.families.size(); ++i) {
    const SweepFamily& f = s.families[i];
    std::vector<ChartPoint> line;
    for (const SweepPoint& p : f.points) {
      if (!HasFigures(p)) continue;
      const std::string title = p.label + ": " + FormatFixed(p.gpu_hours, 1) + " GPU-hours, SLO " +
                                FormatFixed(p.slo_attainment, 4) +
                                (p.frontier ? " (frontier)" : "");
      c.AddDot(p.gpu_hours, Miss(p), html::Colour(i), title, html::Attr("data-policy", f.label));
      if (p.frontier) line.push_back({p.gpu_hours, Miss(p)});
    }
    std::sort(line.begin(), line.end(),
              [](const ChartPoint& a, const ChartPoint& b) { return a.t_s < b.t_s; });
    c.AddSeries(
        {.points = line,
         .color = html::Colour(i),
         .attrs = html::Attr("data-chart", "frontier") + " " + html::Attr("data-policy", f.label),
         .label = f.label + " frontier"});
  }
  return html::Plot(
      "Share of requests that missed the SLO against GPU-hours (lower left is better)", c.Svg());
}

std::string Table(const Sweep& s) {
  std::string h =
      "<table class=\"sweep\"><tr><th>run</th><th>knob</th><th>value</th><th>GPU-hours</th>"
      "<th>SLO attainment</th><th>frontier</th></tr>";
  for (const SweepFamily& f : s.families) {
    for (const SweepPoint& p : f.points) {
      h += "<tr " + html::Attr("data-run", p.label) + "><td>" + EscapeHtml(p.label) + "</td><td>" +
           EscapeHtml(f.knob) + "</td><td>" +
           (std::isfinite(p.value) ? CompactNumber(p.value) : std::string("-")) + "</td><td>" +
           (std::isfinite(p.gpu_hours) ? FormatFixed(p.gpu_hours, 1) : std::string("-")) +
           "</td><td>" +
           (std::isfinite(p.slo_attainment) ? FormatFixed(p.slo_attainment, 4) : std::string("-")) +
           "</td><td>" + (p.frontier ? "yes" : "") + "</td></tr>";
    }
  }
  return h + "</table>";
}

}  // namespace

std::string SweepSection(const Sweep& s) {
  std::string h = "<section class=\"sweep\"><h2>Cost/SLO frontiers (sweep)</h2>" + Chart(s);
  h += "<ul class=\"cheapest\">";
  for (const SweepFamily& f : s.families) {
    if (s.target <= 0) break;
    h += "<li " + html::Attr("data-policy", f.label) + ">" + EscapeHtml(f.label) + ": " +
         EscapeHtml(CheapestLine(f, s.target)) + "</li>";
  }
  h += "</ul><ul class=\"dominance\">";
  for (const Dominance& d : s.dominance) {
    h += "<li " + html::Attr("data-policy", d.policy) + " " + html::Attr("data-over", d.over) +
         ">" + EscapeHtml(d.policy) + (d.dominates ? " dominates " : " does not dominate ") +
         EscapeHtml(d.over);
    if (!d.unmatched.empty()) {
      h += " (nothing of it matches";
      for (const std::string& u : d.unmatched) h += " " + EscapeHtml(u) + ";";
      h.pop_back();
      h += ")";
    }
    h += "</li>";
  }
  h += "</ul>";
  for (const std::string& n : s.notes) h += "<p class=\"note\">" + EscapeHtml(n) + "</p>";
  return h + Table(s) + "</section>\n";
}

}  // namespace aiscale::report
