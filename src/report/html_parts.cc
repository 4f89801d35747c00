#include "report/html_parts.h"

#include <algorithm>
#include <cmath>

#include "report/format.h"

namespace aiscale::report::html {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79"};

std::string Clock(double t_s) {
  const long s = std::lround(std::max(0.0, t_s));
  char buf[48];
  if (s >= 86400) {
    std::snprintf(buf, sizeof buf, "%ldd %02ld:%02ld:%02ld", s / 86400, s % 86400 / 3600,
                  s % 3600 / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s % 3600 / 60, s % 60);
  }
  return buf;
}

}  // namespace

const char* Colour(size_t i) { return kPalette[i % std::size(kPalette)]; }

std::string Attr(std::string_view name, std::string_view value) {
  std::string out(name);
  out += "=\"";
  out += EscapeHtml(value);
  out += '"';
  return out;
}

std::string Swatch(std::string_view colour) {
  return "<i class=\"sw\" style=\"background:" + std::string(colour) + "\"></i>";
}

std::string LineKey(std::string_view colour, std::string_view dash, double width) {
  std::string s = "<svg width=\"26\" height=\"10\"><line x1=\"1\" x2=\"25\" y1=\"5\" y2=\"5\" ";
  s += "stroke=\"" + std::string(colour) + "\" stroke-width=\"" + FormatShort(width, 1) + "\"";
  if (!dash.empty()) s += " stroke-dasharray=\"" + std::string(dash) + "\"";
  return s + "/></svg>";
}

std::string Plot(const std::string& title_html, const std::string& svg) {
  return "<div class=\"plot\"><h3>" + title_html + "</h3>" + svg + "</div>";
}

std::string Toggle(std::string_view attr, std::string_view value, const std::string& inner) {
  std::string key(attr);
  key += ':';
  key += value;
  return "<span " + Attr("data-toggle", key) + " title=\"click to hide or show\">" + inner +
         "</span>";
}

std::vector<ChartPoint> Points(const std::vector<TimelinePoint>& tl, double TimelinePoint::*field,
                               bool zero_is_gap) {
  std::vector<ChartPoint> out;
  out.reserve(tl.size());
  for (const TimelinePoint& p : tl) {
    double v = p.*field;
    if (std::isnan(v)) v = 0;
    if (zero_is_gap && v == 0) v = kNoValue;
    out.push_back({p.t_s, v});
  }
  return out;
}

double TMax(const RunViews& runs) {
  double t = 1;
  for (const RunView& r : runs) {
    if (!r.w->timeline.empty()) t = std::max(t, r.w->timeline.back().t_s);
  }
  return t;
}

double MaxOf(const std::vector<TimelinePoint>& tl, double TimelinePoint::*field) {
  double m = 0;
  for (const TimelinePoint& p : tl) {
    if (const double v = p.*field; v > m) m = v;
  }
  return m;
}

double MaxOf(const RunViews& runs, double TimelinePoint::*field) {
  double m = 0;
  for (const RunView& r : runs) m = std::max(m, MaxOf(r.w->timeline, field));
  return m;
}

std::vector<ChartPoint> PlanPoints(const OraclePlan& plan) {
  std::vector<ChartPoint> out;
  for (size_t m = 0; plan.interval_s > 0 && m < plan.replicas.size(); ++m) {
    out.push_back({static_cast<double>(m) * plan.interval_s, plan.replicas[m]});
  }
  return out;
}

std::string DecisionWhy(const Decision& d) {
  std::string why = d.recommendation.reason.empty() ? "-" : d.recommendation.reason;
  if (d.stabilized != d.recommendation.desired || !d.stabilize_reason.empty()) {
    why += "; stabilized " + std::to_string(d.stabilized);
    if (!d.stabilize_reason.empty()) why += " (" + d.stabilize_reason + ")";
  }
  if (d.constrained != d.stabilized || !d.constrain_reason.empty()) {
    why += "; constrained " + std::to_string(d.constrained);
    if (!d.constrain_reason.empty()) why += " (" + d.constrain_reason + ")";
  }
  if (d.vetoed) why += "; scale-down vetoed: a required signal had no data";
  if (d.action == Action::kFailed) why += "; apply failed: " + d.action_detail;
  for (const SignalInput& in : d.inputs) {
    if (in.status != SignalStatus::kOk) {
      why += "; " + in.name + " " + std::string(SignalStatusName(in.status));
      if (!in.detail.empty()) why += ": " + in.detail;
    }
  }
  return why;
}

void AddDecisionMarkers(const RunSummary& run, const std::string& workload, SvgChart& chart) {
  for (const Decision& d : run.decisions.shown) {
    if (d.workload != workload || d.action != Action::kScaled) continue;
    const double t = SinceEpochSeconds(d.at);
    std::string title = Clock(t) + "  " + std::to_string(d.current) + " -> " +
                        std::to_string(d.constrained) + "  [" + d.recommendation.rule + "] " +
                        DecisionWhy(d);
    chart.AddMarker(t, "#444", title, "data-event=\"rescale\"");
  }
}

std::string TableHtml(const ComparisonTable& t) {
  std::string h = "<table class=\"comparison\"><thead><tr><th>figure</th>";
  for (const TableColumn& c : t.columns) {
    const char* cls = c.kind == TableColumn::Kind::kOracle ? " class=\"oracle\"" : "";
    h += std::string("<th") + cls + " " + Attr("data-policy", c.run) + ">";
    if (c.kind == TableColumn::Kind::kRun) h += Swatch(Colour(c.index));
    h += EscapeHtml(c.label) + "</th>";
  }
  h += "</tr></thead><tbody>";
  for (const TableRow& r : t.rows) {
    h += "<tr " + Attr("data-key", r.key) + "><td>" + EscapeHtml(r.label) + "</td>";
    for (size_t c = 0; c < r.cells.size() && c < t.columns.size(); ++c) {
      std::string cls;
      if (t.columns[c].kind == TableColumn::Kind::kOracle) cls = "oracle";
      if (r.cells[c].bad) cls += cls.empty() ? "bad" : " bad";
      h += cls.empty() ? "<td>" : "<td class=\"" + cls + "\">";
      h += EscapeHtml(r.cells[c].Text()) + "</td>";
    }
    h += "</tr>";
  }
  return h + "</tbody></table>";
}

std::string VerdictsHtml(const RunViews& runs, bool with_static) {
  std::string h;
  for (const RunView& v : runs) {
    const std::string who = "<b>" + EscapeHtml(v.run->label) + "</b> ";
    if (const auto& s = v.run->vs_static; with_static && s) {
      const std::string ratios = "GPU-hours " + FormatFixed(s->gpu_hours_ratio, 3) +
                                 "x, completion " + FormatFixed(s->completion_ratio, 3) +
                                 "x static";
      h += s->beats ? "<li class=\"ok\" data-verdict=\"vs_static\">" + who +
                          "beats static: " + ratios + "</li>"
                    : "<li class=\"bad\" data-verdict=\"vs_static\">" + who +
                          "does not beat static: <span class=\"why\">" +
                          EscapeHtml(s->why_not.empty() ? ratios : s->why_not) + "</span></li>";
    }
    if (const auto& t = v.w->verdict) {
      h += t->met_all
               ? "<li class=\"ok\" data-verdict=\"vs_targets\">" + who + "meets every target</li>"
               : "<li class=\"bad\" data-verdict=\"vs_targets\">" + who +
                     "misses targets: <span class=\"why\">" + EscapeHtml(t->why_not) +
                     "</span></li>";
    }
  }
  return h.empty() ? "" : "<h3>Verdicts</h3><ul class=\"verdicts\">" + h + "</ul>";
}

}  // namespace aiscale::report::html
