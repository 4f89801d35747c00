// The dashboard's workload page: state and conditions, charts over the last hours from the
// stored decisions, and the decision log newest first.
#include <algorithm>
#include <cmath>
#include <limits>

#include "server/conditions.h"
#include "server/dashboard.h"
#include "server/dashboard_chart.h"
#include "server/html.h"
#include "server/status_json.h"

namespace aiscale::server {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The most decisions one page reads: 24 h of ticks every 5 s is 17,280.
constexpr size_t kMaxDecisions = 20000;

double WallS(const Decision& d) { return ToSeconds(d.wall.time_since_epoch()); }

// The decisions of `key` since `since_s`, oldest first: asks the Store for a few, then more
// while the oldest it got is still inside the window.
Result<std::vector<Decision>> LoadWindow(Store& store, const std::string& key, double since_s) {
  size_t n = 256;
  for (int round = 0;; ++round) {
    ASSIGN_OR_RETURN(std::vector<Decision> got, store.Recent(key, n));
    const bool more =
        got.size() == n && n < kMaxDecisions && !got.empty() && WallS(got.front()) >= since_s;
    if (!more) {
      auto first = std::find_if(got.begin(), got.end(),
                                [&](const Decision& d) { return WallS(d) >= since_s; });
      got.erase(got.begin(), first);
      return got;
    }
    // Decoding a decision costs more than anything else here: the second read asks for about
    // as many as the window holds at the rate the first one saw (10% over), not four times
    // more; only an irregular rate needs a third.
    const double span = WallS(got.back()) - WallS(got.front());
    const double want = span > 0 ? got.size() * (WallS(got.back()) - since_s) / span * 1.1 + 16 : 0;
    n = round == 0 && want > n ? static_cast<size_t>(std::min<double>(want, kMaxDecisions))
                               : std::min(kMaxDecisions, n * 4);
  }
}

double FactOf(const Decision& d, std::string_view name) {
  for (const auto& [k, v] : d.recommendation.facts) {
    if (k == name) return v;
  }
  return kNaN;
}

std::string ReplicaChart(const std::vector<Decision>& ds, const WorkloadView& w, double t0,
                         double t1) {
  std::vector<ChartPt> desired, current, ready;
  double top = w.max_replicas;
  for (const Decision& d : ds) {
    desired.push_back({WallS(d), static_cast<double>(d.constrained)});
    current.push_back({WallS(d), static_cast<double>(d.current)});
    ready.push_back({WallS(d), static_cast<double>(d.ready)});
    top = std::max({top, static_cast<double>(d.constrained), static_cast<double>(d.current)});
  }
  TimeChart c(t0, t1, top);
  c.AddHLine(w.max_replicas, "bound", "max " + std::to_string(w.max_replicas));
  c.AddHLine(w.min_replicas, "bound", "min " + std::to_string(w.min_replicas));
  c.AddLine(ready, "ready", "ready", true);
  c.AddLine(current, "current", "current", true);
  c.AddLine(desired, "desired", "desired", true);
  return c.Svg("Replicas: desired vs ready");
}

std::string SignalChart(const std::vector<Decision>& ds, const WorkloadView& w,
                        const std::string& name, double t0, double t1) {
  std::vector<ChartPt> pts;
  double top = 0;
  for (const Decision& d : ds) {
    double v = kNaN;
    for (const SignalInput& in : d.inputs) {
      if (in.name == name && in.status == SignalStatus::kOk) v = in.value;
    }
    if (std::isfinite(v)) top = std::max(top, v);
    pts.push_back({WallS(d), v});
  }
  const double target = SignalTarget(w, name);
  if (std::isfinite(target)) top = std::max(top, target * 1.2);
  TimeChart c(t0, t1, top);
  if (std::isfinite(target)) c.AddHLine(target, "target", "target " + ShortNumber(target));
  c.AddLine(pts, "value", name + " (mean per replica)", false);
  return c.Svg("Signal " + name);
}

// Predictive: the demand, the forecast at now + lead, and forecast ± margin.
std::string ForecastChart(const std::vector<Decision>& ds, double t0, double t1) {
  std::vector<ChartPt> demand, forecast, lo, hi;
  double top = 0;
  for (const Decision& d : ds) {
    const double f = FactOf(d, "forecast"), m = FactOf(d, "margin"), x = FactOf(d, "demand");
    const double lead = FactOf(d, "lead_s");
    const double at = WallS(d) + (std::isfinite(lead) ? lead : 0);
    demand.push_back({WallS(d), x});
    forecast.push_back({at, f});
    lo.push_back({at, std::isfinite(m) ? std::max(0.0, f - m) : kNaN});
    hi.push_back({at, std::isfinite(m) ? f + m : kNaN});
    for (double v : {f + (std::isfinite(m) ? m : 0), x}) {
      if (std::isfinite(v)) top = std::max(top, v);
    }
  }
  TimeChart c(t0, t1, top);
  c.AddBand(lo, hi, "forecast", "error band");
  c.AddLine(demand, "demand", "demand", false);
  c.AddLine(forecast, "forecast", "forecast (drawn at the time it is for)", false);
  return c.Svg("Forecast");
}

// Training: samples/s over time, with the phases shaded.
std::string TrainingChart(const std::vector<Decision>& ds, double t0, double t1) {
  std::vector<ChartPt> rate;
  double top = 0;
  for (const Decision& d : ds) {
    const double v = FactOf(d, "samples_per_s");
    if (std::isfinite(v)) top = std::max(top, v);
    rate.push_back({WallS(d), v});
  }
  TimeChart chart(t0, t1, top);
  for (size_t i = 0; i + 1 < ds.size(); ++i) {
    const double ph = FactOf(ds[i], "phase");
    if (ph == 0) chart.AddSpan(WallS(ds[i]), WallS(ds[i + 1]), "load", "data loading");
    if (ph == 2) chart.AddSpan(WallS(ds[i]), WallS(ds[i + 1]), "eval", "evaluation");
  }
  chart.AddLine(rate, "value", "samples/s (load and eval phases shaded)", false);
  return chart.Svg("Training throughput");
}

bool HasFact(const std::vector<Decision>& ds, std::string_view name) {
  return std::any_of(ds.begin(), ds.end(),
                     [&](const Decision& d) { return std::isfinite(FactOf(d, name)); });
}

// The training policy's learned throughput per node count (its newest fit), with what it
// observed at each count, as an x-y chart: nodes along x, samples/s up y.
std::string ThroughputCurve(const std::vector<Decision>& ds) {
  const std::string learned = "compute_samples_per_s_at_", seen = "compute_observed_at_";
  for (auto it = ds.rbegin(); it != ds.rend(); ++it) {
    std::vector<std::pair<double, double>> curve, points;
    for (const auto& [k, v] : it->recommendation.facts) {
      if (!std::isfinite(v)) continue;
      if (k.rfind(learned, 0) == 0) curve.push_back({std::atof(k.c_str() + learned.size()), v});
      if (k.rfind(seen, 0) == 0) points.push_back({std::atof(k.c_str() + seen.size()), v});
    }
    if (curve.size() < 2) continue;
    std::sort(curve.begin(), curve.end());
    double xmax = 1, ymax = 1;
    for (const auto& [x, y] : curve) xmax = std::max(xmax, x), ymax = std::max(ymax, y);
    for (const auto& [x, y] : points) xmax = std::max(xmax, x), ymax = std::max(ymax, y);
    const double w = 420, h = 170, l = 44, b = 20;
    auto px = [&](double x) { return ShortNumber(l + x / xmax * (w - l - 10)); };
    auto py = [&](double y) { return ShortNumber(h - b - y / ymax * (h - b - 10)); };
    std::string d;
    for (const auto& [x, y] : curve) {
      d += d.empty() ? 'M' : 'L';
      d += px(x);
      d += ' ';
      d += py(y);
    }
    std::string out =
        "<figure class=\"chart\"><figcaption>Learned throughput by node count "
        "(line: the fit as of " +
        FormatWallTime(it->wall) +
        "; dots: observed)</figcaption><svg viewBox=\"0 0 420 170\" role=\"img\">"
        "<title>learned throughput curve</title><path class=\"series curve\" "
        "data-points=\"" +
        std::to_string(curve.size()) + "\" d=\"" + d + "\"/>";
    for (const auto& [x, y] : points) {
      out += "<circle class=\"observed\" r=\"3\" cx=\"" + px(x) + "\" cy=\"" + py(y) + "\"/>";
    }
    out += "<text class=\"xlabel\" x=\"" + px(xmax) + "\" y=\"166\">" + ShortNumber(xmax) +
           " nodes</text><text class=\"ylabel\" x=\"40\" y=\"14\">" + ShortNumber(ymax) +
           "/s</text></svg></figure>";
    return out;
  }
  return "";
}

std::string Charts(const std::vector<Decision>& ds, const WorkloadView& w, double t0, double t1) {
  std::string out = "<section class=\"charts\"><h2>Since " + ClockLabel(t0) + " UTC (the last " +
                    AgeText(t1 - t0) + ")</h2>";
  if (ds.empty()) return out + "<p>No decisions recorded in this window.</p></section>";
  out += ReplicaChart(ds, w, t0, t1);
  for (const SignalView& s : w.signals) out += SignalChart(ds, w, s.name, t0, t1);
  if (HasFact(ds, "forecast")) out += ForecastChart(ds, t0, t1);
  if (HasFact(ds, "samples_per_s")) out += TrainingChart(ds, t0, t1);
  return out + ThroughputCurve(ds) + "</section>";
}

void DecisionRow(std::string& out, const Decision& d) {
  out += "<tr><td>";
  AppendEscaped(out, FormatWallTime(d.wall));
  out += "</td><td class=\"num\">" + std::to_string(d.current) + " &rarr; " +
         std::to_string(d.constrained) + " (" + std::to_string(d.ready) + " ready)</td><td>";
  for (const SignalInput& in : d.inputs) {
    AppendEscaped(out, in.name);
    out += "=";
    out += in.status == SignalStatus::kOk ? ShortNumber(in.value)
                                          : std::string(SignalStatusName(in.status));
    out += " ";
  }
  out += "</td><td class=\"rule\">";
  AppendEscaped(out, d.recommendation.rule);
  out += "</td><td>";
  AppendEscaped(out, d.recommendation.reason);
  out += "</td><td>";
  std::string limit = d.stabilize_reason;
  if (!d.constrain_reason.empty()) limit += (limit.empty() ? "" : "; ") + d.constrain_reason;
  AppendEscaped(out, limit);
  out += "</td><td>";
  AppendEscaped(out, std::string(ActionName(d.action)) +
                         (d.action_detail.empty() ? "" : ": " + d.action_detail));
  if (d.unchanged_ticks > 0) {
    out += " <em>";
    AppendEscaped(out, d.UnchangedText());
    out += "</em>";
  }
  out += "</td></tr>";
}

std::string DecisionLog(const std::vector<Decision>& ds, size_t rows) {
  std::string out =
      "<section><h2>Decisions, newest first</h2><table class=\"log\" id=\"log\">"
      "<thead><tr><th>Time (UTC)</th><th>Scale</th><th>Inputs</th><th>Rule</th>"
      "<th>Reason</th><th>Limit that bound it</th><th>Action</th></tr></thead><tbody>";
  size_t n = 0;
  for (auto it = ds.rbegin(); it != ds.rend() && n < rows; ++it, ++n) DecisionRow(out, *it);
  out += "</tbody></table>";
  if (ds.size() > rows) {
    out += "<p>" + std::to_string(ds.size() - rows) +
           " older decisions in this window (?log=N shows up to 1000).</p>";
  }
  return out + "</section>";
}

std::string StateSection(const WorkloadView& w) {
  std::string out = "<section class=\"state\"><p>";
  AppendEscaped(out, w.ref.kind + " on " + w.engine + ", policy " + w.policy);
  out += " &middot; min <b data-field=\"min\">" + std::to_string(w.min_replicas) +
         "</b> max <b data-field=\"max\">" + std::to_string(w.max_replicas) +
         "</b> desired <b data-field=\"desired\">" + std::to_string(w.desired) +
         "</b> current <b data-field=\"current\">" + std::to_string(w.current) +
         "</b> ready <b data-field=\"ready\">" + std::to_string(w.ready) + "</b></p>";
  out += "<p data-field=\"steering\">Override: <span class=\"badge " +
         std::string(SteerModeName(w.steering.mode)) + "\">";
  AppendEscaped(out, w.steering.Describe());
  out +=
      "</span></p><table class=\"conditions\"><thead><tr><th>Condition</th><th>Status</th>"
      "<th>Reason</th><th>Message</th></tr></thead><tbody>";
  for (const Condition& c : ConditionsOf(w)) {
    out += "<tr data-condition=\"" + c.type + "\"><td>" + c.type + "</td><td>" +
           (c.status ? "True" : "False") + "</td><td>" + c.reason + "</td><td>";
    AppendEscaped(out, c.message);
    out += "</td></tr>";
  }
  out +=
      "</tbody></table><h2>Signals</h2><table class=\"signals\"><thead><tr><th>Signal</th>"
      "<th>Value</th><th>Target</th><th>Status</th><th>Age</th><th>Source</th><th>Detail</th>"
      "</tr></thead><tbody>";
  if (w.signals.empty()) out += "<tr><td colspan=\"7\">none: the policy reads no signal</td></tr>";
  for (const SignalView& s : w.signals) {
    const std::string status(SignalStatusName(s.status));
    out += "<tr><td>";
    AppendEscaped(out, s.name);
    out += "</td><td class=\"num\">" +
           (s.status == SignalStatus::kOk ? ShortNumber(s.value) : "-") +
           "</td><td class=\"num\">" + ShortNumber(SignalTarget(w, s.name)) +
           "</td><td><span class=\"sig " + status + "\">" + status + "</span></td><td>" +
           AgeText(s.age_s) + "</td><td>";
    AppendEscaped(out, s.source);
    out += "</td><td>";
    AppendEscaped(out, s.detail);
    out += "</td></tr>";
  }
  return out + "</tbody></table></section>";
}

}  // namespace

Reply WorkloadPage(const LiveView& view, Store* store, const std::string& name, WallTime now,
                   const PageParams& p) {
  auto w = ResolveWorkload(view, name);
  if (!w.ok()) return ErrorReply(w.status().IsNotFound() ? 404 : 400, w.status().message());
  const double t1 = ToSeconds(now.time_since_epoch());
  const double t0 = t1 - p.hours * 3600;
  std::vector<Decision> ds;
  std::string note;
  if (!store) {
    note =
        "<p>No store configured (spec.store): the charts and the log need recorded decisions.</p>";
  } else if (auto got = LoadWindow(*store, w->ref.Key(), t0); got.ok()) {
    ds = std::move(got).value();
  } else {
    note = "<p>Unable to read decisions from the store: " + EscapeHtml(got.status().message()) +
           "</p>";
  }
  // Charts start where the data does when that is later than the window (a fresh daemon).
  const double from = ds.empty() ? t0 : std::max(t0, WallS(ds.front()) - 60);
  std::string main =
      StateSection(*w) + note + Charts(ds, *w, from, t1) + DecisionLog(ds, p.log_rows);
  if (p.fragment) return Reply{200, std::move(main), kHtmlType};
  const std::string key = w->ref.Key();
  std::string crumbs = "<span>/</span><span data-field=\"workload\">" + EscapeHtml(key) + "</span>";
  return Reply{200, PageFrame(key, crumbs, main), kHtmlType};
}

}  // namespace aiscale::server
