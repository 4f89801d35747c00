#include "sim/report_html.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "sim/json_fields.h"
#include "sim/oracle_statement.h"
#include "sim/svg_chart.h"

namespace aiscale::sim {
namespace {

using nlohmann::json;
using Runs = std::vector<const json*>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// One colour per policy, in run order (no red: red is the SLO line and node failures).
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79"};
constexpr const char* kRed = "#d62728";

const char* Colour(size_t i) { return kPalette[i % std::size(kPalette)]; }

double Num(const json& j, const char* key) { return NumberOr(j, key, kNaN); }

// A table cell: the figure with `decimals`, "-" when the run lacks it.
std::string Cell(double v, int decimals, std::string_view cls = "") {
  const std::string text = std::isnan(v) ? "-" : FormatFixed(v, decimals);
  return cls.empty() ? "<td>" + text + "</td>"
                     : "<td class=\"" + std::string(cls) + "\">" + text + "</td>";
}

// v with up to `decimals` decimals and no trailing zeros: 2 -> "2", 0.25 -> "0.25".
std::string Short(double v, int decimals = 3) {
  std::string s = FormatFixed(v, decimals);
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string Policy(const json& run) { return run.value("policy", std::string()); }

std::string Attr(std::string_view name, std::string_view value) {
  return std::string(name) + "=\"" + EscapeHtml(value) + "\"";
}

const json& Timeline(const json& run) {
  static const json kEmpty = json::array();
  const auto it = run.find("timeline");
  return it != run.end() && it->is_array() ? *it : kEmpty;
}

// The time axis every chart of a section shares: the latest timeline point of any run.
double TMax(const Runs& runs) {
  double t = 1;
  for (const json* r : runs) {
    for (const json& p : Timeline(*r)) t = std::max(t, Num(p, "t_s"));
  }
  return t;
}

double MaxOf(const Runs& runs, const char* key) {
  double m = 0;
  for (const json* r : runs) {
    for (const json& p : Timeline(*r)) {
      if (const double v = Num(p, key); v > m) m = v;
    }
  }
  return m;
}

// `key` over the run's timeline; a missing value is 0, or a gap when `zero_is_gap` (a p99 of
// 0 means nothing completed in that window, not an instant answer).
std::vector<ChartPoint> Points(const json& run, const char* key, bool zero_is_gap = false) {
  std::vector<ChartPoint> out;
  for (const json& p : Timeline(run)) {
    double v = Num(p, key);
    if (std::isnan(v)) v = 0;
    if (zero_is_gap && v == 0) v = kNaN;
    out.push_back({Num(p, "t_s"), v});
  }
  return out;
}

std::string Swatch(std::string_view colour) {
  return "<i class=\"sw\" style=\"background:" + std::string(colour) + "\"></i>";
}

std::string LineKey(std::string_view colour, std::string_view dash) {
  return "<svg width=\"26\" height=\"10\"><line x1=\"1\" x2=\"25\" y1=\"5\" y2=\"5\" stroke=\"" +
         std::string(colour) + "\" stroke-width=\"2\"" +
         (dash.empty() ? "" : " stroke-dasharray=\"" + std::string(dash) + "\"") + "/></svg>";
}

// One line per run that report.json judged: against static (training) and against the
// inference targets, with the reason when it fell short.
std::string Verdicts(const Runs& runs) {
  std::string h;
  for (const json* r : runs) {
    const std::string who = "<b>" + EscapeHtml(Policy(*r)) + "</b> ";
    if (const auto it = r->find("vs_static"); it != r->end() && it->is_object()) {
      const json& v = *it;
      const std::string ratios = "GPU-hours " + FormatFixed(Num(v, "gpu_hours_ratio"), 3) +
                                 "x, completion " + FormatFixed(Num(v, "completion_ratio"), 3) +
                                 "x static";
      if (v.value("beats_static", false)) {
        h += "<li class=\"ok\" data-verdict=\"vs_static\">" + who + "beats static: " + ratios +
             "</li>";
      } else {
        h += "<li class=\"bad\" data-verdict=\"vs_static\">" + who +
             "does not beat static: " + "<span class=\"why\">" +
             EscapeHtml(v.value("why_not", ratios)) + "</span></li>";
      }
    }
    if (const auto it = r->find("vs_targets"); it != r->end() && it->is_object()) {
      const json& v = *it;
      if (v.value("met_all", false)) {
        h += "<li class=\"ok\" data-verdict=\"vs_targets\">" + who + "meets every target</li>";
      } else {
        h += "<li class=\"bad\" data-verdict=\"vs_targets\">" + who +
             "misses targets: " + "<span class=\"why\">" +
             EscapeHtml(v.value("why_not", std::string("-"))) + "</span></li>";
      }
    }
  }
  return h.empty() ? "" : "<h2>Verdicts</h2><ul class=\"verdicts\">" + h + "</ul>";
}

// ---- inference ------------------------------------------------------------------------

std::string InferenceTable(const Runs& runs) {
  std::string h =
      "<table class=\"inference\"><tr><th>policy</th><th>GPU-hours</th><th>GPU-hours / "
      "oracle</th><th>cost (USD)</th><th>SLO attainment</th><th>latency p50 (s)</th><th>latency "
      "p99 (s)</th><th>TTFT p50 (s)</th><th>TTFT p99 (s)</th><th>requests</th><th>timed "
      "out</th><th>dropped</th><th>scale events</th></tr>";
  for (size_t i = 0; i < runs.size(); ++i) {
    const json& r = *runs[i];
    const double target = r.contains("slo") ? Num(r["slo"], "attainment") : kNaN;
    const double a = Num(r, "slo_attainment");
    h += "<tr " + Attr("data-policy", Policy(r)) + "><td>" + Swatch(Colour(i)) +
         EscapeHtml(Policy(r)) + "</td>" + Cell(Num(r, "gpu_hours"), 1) +
         Cell(Num(r, "gpu_hours_over_oracle"), 2) + Cell(Num(r, "cost_usd"), 0) +
         Cell(a, 4, !std::isnan(target) && a < target ? "bad" : "") +
         Cell(Num(r, "latency_p50_s"), 2) + Cell(Num(r, "latency_p99_s"), 2) +
         Cell(Num(r, "ttft_p50_s"), 2) + Cell(Num(r, "ttft_p99_s"), 2) +
         Cell(Num(r, "requests"), 0) + Cell(Num(r, "timed_out"), 0) + Cell(Num(r, "dropped"), 0) +
         Cell(Num(r, "scale_events"), 0) + "</tr>";
  }
  // Every run replays the same arrivals, so one oracle serves them all; take the first.
  for (const json* r : runs) {
    if (!r->contains("oracle_gpu_hours")) continue;
    const std::string feasible = r->value("oracle_feasible", true) ? "" : " (SLO not attainable)";
    const std::string dash = "<td>-</td>";
    h += "<tr class=\"oracle\" data-policy=\"oracle\"><td>oracle (offline lower bound" + feasible +
         ")</td>" + Cell(Num(*r, "oracle_gpu_hours"), 1) + Cell(1, 2) + dash +
         Cell(Num(*r, "oracle_attainment"), 4);
    for (int k = 0; k < 8; ++k) h += dash;
    h += "</tr>";
    break;
  }
  return h + "</table>";
}

std::string InferenceMeta(const Runs& runs) {
  const json& r = *runs.front();
  std::string m;
  if (const auto it = r.find("slo"); it != r.end() && it->is_object()) {
    m += "SLO: TTFT &le; " + Short(Num(*it, "ttft_s")) + " s and latency &le; " +
         Short(Num(*it, "latency_s")) + " s for " + Short(100 * Num(*it, "attainment")) +
         "% of requests. ";
  }
  if (r.contains("cold_start_s")) {
    m += "Cold start " + FormatFixed(Num(r, "cold_start_s"), 0) + " s. ";
  }
  if (r.contains("static_peak_replicas")) {
    m += "static-peak size " + FormatFixed(Num(r, "static_peak_replicas"), 0) + " replicas. ";
  }
  if (r.contains("trace") && r["trace"].is_string()) {
    m += "Trace: " + EscapeHtml(r["trace"].get<std::string>()) + ". ";
  }
  if (const std::string o = OracleStatement(r); !o.empty()) m += EscapeHtml(o) + ". ";
  if (r.contains("oracle_error") && r["oracle_error"].is_string()) {
    m += "No oracle: " + EscapeHtml(r["oracle_error"].get<std::string>()) + ".";
  }
  return m.empty() ? "" : "<p class=\"meta\">" + m + "</p>";
}

std::string InferenceLegend(const Runs& runs) {
  std::string h = "<div class=\"legend\" data-legend=\"policies\">";
  for (size_t i = 0; i < runs.size(); ++i) {
    h += "<span " + Attr("data-policy", Policy(*runs[i])) + ">" + Swatch(Colour(i)) +
         EscapeHtml(Policy(*runs[i])) + "</span>";
  }
  h += "<span>" + LineKey("#444", "") + "ready</span><span>" + LineKey("#444", "5 3") +
       "desired</span><span>" + LineKey(kRed, "2 3") + "SLO bound</span></div>";
  return h;
}

// Draws one series per run into `c`: `key` of each run's timeline, in the run's colour, and
// the SLO bound when there is one.
std::string OverlayChart(SvgChart c, const Runs& runs, const char* chart, const std::string& title,
                         const char* key, bool zero_is_gap, double slo = kNaN) {
  for (size_t i = 0; i < runs.size(); ++i) {
    c.AddSeries({Points(*runs[i], key, zero_is_gap), Colour(i), false, false,
                 Attr("data-chart", chart) + " " + Attr("data-policy", Policy(*runs[i]))});
  }
  if (!std::isnan(slo)) {
    c.AddHLine(slo, kRed, "SLO " + Short(slo) + " s",
               Attr("data-chart", chart) + " data-ref=\"slo\"");
  }
  return "<h3>" + title + "</h3>" + c.Svg();
}

// A log axis for a latency chart: from the smallest positive value (or the SLO) to the largest.
SvgChart LatencyAxis(const Runs& runs, const char* key, double t_max, double slo) {
  double lo = std::isnan(slo) ? kNaN : slo, hi = std::isnan(slo) ? 0 : slo;
  for (const json* r : runs) {
    for (const json& p : Timeline(*r)) {
      const double v = Num(p, key);
      if (!(v > 0)) continue;
      lo = std::isnan(lo) ? v : std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return SvgChart::Log(t_max, std::isnan(lo) ? 0.1 : std::max(lo, 1e-3), hi);
}

std::string InferenceSection(const Runs& runs) {
  std::string h = "<section class=\"inference\"><h2>Inference runs</h2>" + InferenceMeta(runs) +
                  InferenceTable(runs) + Verdicts(runs) + "<h2>Over time</h2>" +
                  InferenceLegend(runs);
  const double t_max = TMax(runs);
  h += OverlayChart(SvgChart(t_max, 1.05 * MaxOf(runs, "request_rate")), runs, "demand",
                    "Demand: requests/s arriving (the same arrivals for every policy, so the "
                    "lines lie on each other)",
                    "request_rate", false);

  // The oracle's per-interval plan (the same for every run), drawn grey under the policies.
  std::vector<ChartPoint> plan;
  double plan_max = 0;
  if (const auto it = runs.front()->find("oracle_plan"); it != runs.front()->end()) {
    const double dt = Num(*it, "interval_s");
    const auto& reps = (*it)["replicas"];
    for (size_t m = 0; dt > 0 && reps.is_array() && m < reps.size(); ++m) {
      const double n = reps[m].is_number() ? reps[m].get<double>() : kNaN;
      plan.push_back({static_cast<double>(m) * dt, n});
      if (n > plan_max) plan_max = n;
    }
  }
  SvgChart rep(t_max, std::max({MaxOf(runs, "desired"), MaxOf(runs, "ready"), plan_max}) + 1);
  if (!plan.empty()) rep.AddSeries({plan, "#999999", false, true, "data-kind=\"oracle\""});
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string who =
        Attr("data-chart", "replicas") + " " + Attr("data-policy", Policy(*runs[i]));
    rep.AddSeries(
        {Points(*runs[i], "desired"), Colour(i), true, true, who + " data-kind=\"desired\""});
    rep.AddSeries(
        {Points(*runs[i], "ready"), Colour(i), false, true, who + " data-kind=\"ready\""});
  }
  h += std::string("<h3>Replicas: ready (solid) vs desired (dashed)") +
       (plan.empty() ? "" : "; the oracle's plan in grey") + "</h3>" + rep.Svg();

  const json& first = *runs.front();
  const json slo = first.contains("slo") && first["slo"].is_object() ? first["slo"] : json();
  const double slo_lat = slo.is_object() ? Num(slo, "latency_s") : kNaN;
  const double slo_ttft = slo.is_object() ? Num(slo, "ttft_s") : kNaN;
  // Timelines that carry per-interval p99s (every completion in exactly one point) are drawn
  // from those; older ones from the signals' window before each point.
  const json& tl = first.contains("timeline") ? first["timeline"] : json();
  const bool per_interval =
      tl.is_array() && !tl.empty() && tl.back().contains("interval_latency_p99_s");
  const char* lat_key = per_interval ? "interval_latency_p99_s" : "latency_p99_s";
  const char* ttft_key = per_interval ? "interval_ttft_p99_s" : "ttft_p99_s";
  const std::string span = per_interval
                               ? "completed since the previous report point"
                               : "completed in the metrics window before each report point";
  h += OverlayChart(
      LatencyAxis(runs, lat_key, t_max, slo_lat), runs, "latency",
      "p99 end-to-end latency (s, log scale) of the requests " + span + "; gaps: none completed",
      lat_key, true, slo_lat);
  h += OverlayChart(LatencyAxis(runs, ttft_key, t_max, slo_ttft), runs, "ttft",
                    "p99 time to first token (s, log scale), same spans", ttft_key, true, slo_ttft);
  return h + "</section>";
}

// ---- training and other runs ----------------------------------------------------------

std::string TrainingTable(const Runs& runs) {
  struct Row {
    const char* label;
    const char* key;
    int decimals;
    double scale;
  };
  static constexpr Row kRows[] = {
      {"GPU-hours", "gpu_hours", 1, 1},
      {"completion time (h)", "completion_time_s", 2, 1 / 3600.0},
      {"mean GPU utilization", "mean_gpu_util", 3, 1},
      {"rescales", "rescales", 0, 1},
      {"rescales per hour", "rescales_per_hour", 2, 1},
      {"max failure replacement (s)", "max_failure_replacement_s", 0, 1},
      {"cost (USD)", "cost_usd", 0, 1},
  };
  const json* st = nullptr;
  for (const json* r : runs) {
    if (Policy(*r) == "static") st = r;
  }
  std::string h = "<table class=\"training\"><tr><th>metric</th>";
  for (const json* r : runs) h += "<th>" + EscapeHtml(Policy(*r)) + "</th>";
  for (const json* r : runs) {
    if (st && r != st) h += "<th>" + EscapeHtml(Policy(*r)) + " / static</th>";
  }
  h += "</tr>";
  for (const Row& row : kRows) {
    h += "<tr><td>" + std::string(row.label) + "</td>";
    for (const json* r : runs) h += Cell(Num(*r, row.key) * row.scale, row.decimals);
    for (const json* r : runs) {
      if (!st || r == st) continue;
      const double a = Num(*r, row.key), b = Num(*st, row.key);
      h += Cell(b != 0 ? a / b : kNaN, 3);
    }
    h += "</tr>";
  }
  h += "<tr><td>cut at duration limit</td>";
  for (const json* r : runs)
    h += std::string("<td>") + (r->value("cut", false) ? "yes" : "no") + "</td>";
  for (const json* r : runs) {
    if (st && r != st) h += "<td></td>";
  }
  return h + "</tr></table>";
}

// Phase shading: load and eval phases and restarts as background bands, merged where equal.
void PhaseBands(const json& tl, SvgChart& c) {
  auto fill = [](const json& p) -> const char* {
    if (Num(p, "restarting") > 0) return "#cfcfcf";
    const double ph = Num(p, "phase");
    return ph == 0 ? "#f7dcaa" : ph == 2 ? "#dccbf2" : nullptr;
  };
  size_t i = 0;
  while (i + 1 < tl.size()) {
    const char* f = fill(tl[i]);
    size_t j = i + 1;
    while (j + 1 < tl.size() && fill(tl[j]) == f) ++j;
    if (f) c.AddBand(Num(tl[i], "t_s"), Num(tl[j], "t_s"), f);
    i = j;
  }
}

std::string TrainingRunCharts(const json& run, double t_max, double n_max, double s_max) {
  std::vector<double> failures, rescales;
  for (const json& w : run.value("workloads", json::array())) {
    for (const json& f : w.value("failure_events", json::array()))
      failures.push_back(Num(f, "t_s"));
    for (const json& r : w.value("rescale_events", json::array()))
      rescales.push_back(Num(r, "t_s"));
  }
  const std::string who = Attr("data-policy", Policy(run));
  auto chart = [&](const char* name, const char* title, double y_max,
                   std::vector<std::pair<const char*, const char*>> series) {
    SvgChart c(t_max, y_max, 620, 170);
    PhaseBands(Timeline(run), c);
    // The training oracle's plan (nodes per report interval), grey under the run's own.
    if (const auto it = run.find("oracle_plan"); std::string(name) == "nodes" && it != run.end()) {
      std::vector<ChartPoint> plan;
      const double dt = Num(*it, "interval_s");
      const json reps = it->value("replicas", json::array());
      for (size_t m = 0; dt > 0 && m < reps.size(); ++m) {
        if (reps[m].is_number())
          plan.push_back({static_cast<double>(m) * dt, reps[m].get<double>()});
      }
      if (!plan.empty()) c.AddSeries({plan, "#999999", false, true, "data-kind=\"oracle\""});
    }
    for (const auto& [key, colour] : series) {
      c.AddSeries({Points(run, key), colour, false, true,
                   Attr("data-chart", name) + " " + who + " " + Attr("data-kind", key)});
    }
    for (double t : failures) c.AddVLine(t, kRed, "data-event=\"failure\"");
    for (double t : rescales) c.AddMarker(t, "#444");
    return "<h3>" + std::string(title) + "</h3>" + c.Svg();
  };
  return "<div class=\"run\"><h3 class=\"policy\">" + EscapeHtml(Policy(run)) + "</h3>" +
         chart("nodes", "nodes: desired (blue) vs ready (green); the oracle's plan in grey", n_max,
               {{"desired", "#1f77b4"}, {"ready", "#2ca02c"}}) +
         chart("gpu_util", "GPU utilization of allocated GPUs (%)", 100,
               {{"gpu_util", "#1f77b4"}}) +
         chart("samples", "samples/s", s_max, {{"samples_per_s", "#1f77b4"}}) + "</div>";
}

std::string TrainingSection(const Runs& runs) {
  std::string h =
      "<section class=\"training\"><h2>Training and other runs</h2>" + TrainingTable(runs) +
      Verdicts(runs) + "<div class=\"legend\" data-legend=\"phases\"><span>" + Swatch("#f7dcaa") +
      "load</span><span>" + Swatch("#ffffff") + "compute</span><span>" + Swatch("#dccbf2") +
      "eval</span><span>" + Swatch("#cfcfcf") + "restarting</span><span>" + LineKey(kRed, "4 2") +
      "node failure</span><span>" + "&#9660; rescale</span><span>" + LineKey("#1f77b4", "") +
      "desired / value</span><span>" + LineKey("#2ca02c", "") + "ready</span></div>";
  const double t_max = TMax(runs);
  const double n_max = MaxOf(runs, "desired") + 1;
  const double s_max = 1.1 * MaxOf(runs, "samples_per_s");
  h += "<div class=\"runs\">";
  for (const json* r : runs) h += TrainingRunCharts(*r, t_max, n_max, s_max);
  return h + "</div></section>";
}

constexpr const char* kStyle = R"CSS(
body{font-family:system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:16px;color:#222;max-width:1400px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:18px 0 6px} h3{font-size:13px;margin:12px 0 2px;font-weight:600}
.meta{font-size:13px;color:#555;margin:4px 0}
table{border-collapse:collapse;margin:8px 0 12px} td,th{border:1px solid #ccc;padding:4px 10px;text-align:right;font-size:13px}
th{background:#f3f3f3} td:first-child,th:first-child{text-align:left}
tr.oracle td{background:#f8f8f8;font-style:italic} td.bad{color:#b00020;font-weight:600}
.verdicts{font-size:13px;margin:4px 0 12px;padding-left:20px} .verdicts li{margin:3px 0}
.verdicts li.ok::marker{color:#2ca02c} .verdicts li.bad::marker{color:#d62728} .why{color:#7a1f1f}
.runs{display:flex;gap:18px;flex-wrap:nowrap} .run{flex:1;min-width:0} h3.policy{font-size:15px}
.legend span{display:inline-block;margin-right:14px;font-size:12px;vertical-align:middle}
.legend svg{vertical-align:middle;margin-right:4px}
.sw{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:4px;border:1px solid #999}
svg text{font-size:11px;fill:#444}
)CSS";

}  // namespace

std::string ReportHtml(const json& report) {
  const std::string name = report.value("scenario", std::string());
  Runs inference, other;
  if (const auto it = report.find("runs"); it != report.end() && it->is_array()) {
    for (const json& r : *it) {
      (r.value("kind", std::string()) == "InferenceService" ? inference : other).push_back(&r);
    }
  }
  std::string h = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>aiscale report: " +
                  EscapeHtml(name) + "</title><style>" + kStyle + "</style></head><body>\n" +
                  "<h1>aiscale report: " + EscapeHtml(name) + "</h1><p class=\"meta\">";
  if (report.contains("file") && report["file"].is_string()) {
    h += "Scenario file " + EscapeHtml(report["file"].get<std::string>()) + ". ";
  }
  if (report.contains("seed")) h += "Seed " + report["seed"].dump() + ". ";
  if (const double lim = Num(report, "duration_limit_s"); !std::isnan(lim)) {
    h += "Duration limit " + FormatFixed(lim / 3600, 1) + " h.";
  }
  h += "</p>\n";
  if (!inference.empty()) h += InferenceSection(inference) + "\n";
  if (!other.empty()) h += TrainingSection(other) + "\n";
  if (inference.empty() && other.empty()) h += "<p>No runs.</p>\n";
  return h + "</body></html>\n";
}

}  // namespace aiscale::sim
