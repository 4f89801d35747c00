// The dashboard's overview: one row per workload, as `aiscale status` prints them.
#include <algorithm>
#include <cmath>

#include "server/conditions.h"
#include "server/dashboard.h"
#include "server/dashboard_chart.h"
#include "server/html.h"

namespace aiscale::server {
namespace {

void Cell(std::string& out, std::string_view field, const std::string& text, bool num = true) {
  out += num ? "<td class=\"num\" data-field=\"" : "<td data-field=\"";
  out += field;
  out += "\">";
  AppendEscaped(out, text);
  out += "</td>";
}

void SignalsCell(std::string& out, const WorkloadView& w) {
  out += "<td data-field=\"signals\">";
  for (const SignalView& s : w.signals) {
    const std::string status(SignalStatusName(s.status));
    out += "<span class=\"sig " + status + "\" data-signal=\"";
    AppendEscaped(out, s.name);
    out += "\" title=\"";
    AppendEscaped(out, status + (s.age_s >= 0 ? ", " + AgeText(s.age_s) + " old" : "") + " from " +
                           s.source + (s.detail.empty() ? "" : ": " + s.detail));
    out += "\">";
    AppendEscaped(out, s.name);
    out += " ";
    if (s.status == SignalStatus::kOk) {
      out += ShortNumber(s.value);
    } else {
      out += "&lt;";
      out += status;
      out += "&gt;";
    }
    const double target = SignalTarget(w, s.name);
    if (std::isfinite(target)) {
      out += '/';
      out += ShortNumber(target);
    }
    out += "</span>";
  }
  out += "</td>";
}

void StateCell(std::string& out, const WorkloadView& w) {
  out += "<td data-field=\"state\">";
  if (w.steering.mode != SteerMode::kNone) {
    out += "<span class=\"badge " + std::string(SteerModeName(w.steering.mode)) + "\" title=\"";
    AppendEscaped(out, w.steering.Describe());
    out += "\">" + std::string(SteerModeName(w.steering.mode)) + "</span> ";
  }
  for (const Condition& c : ConditionsOf(w)) {
    const bool notable = (c.type == "ScalingLimited") == c.status;
    if (!notable || c.type == "Paused") continue;
    out += "<span class=\"badge " + std::string(c.status ? "True" : "False") + "\" title=\"";
    AppendEscaped(out, c.message);
    out += "\">" + c.type + (c.status ? "" : "=False") + ": " + c.reason + "</span> ";
  }
  out += "</td>";
}

void Row(std::string& out, const WorkloadView& w, double now_s) {
  const std::string key = w.ref.Key();
  out += "<tr data-workload=\"";
  AppendEscaped(out, key);
  out += "\"><td data-field=\"name\"><a href=\"/workloads/" + UrlEncode(key) + "\">";
  AppendEscaped(out, key);
  out += "</a></td>";
  Cell(out, "engine", w.engine, false);
  Cell(out, "policy", w.policy, false);
  SignalsCell(out, w);
  Cell(out, "min", std::to_string(w.min_replicas));
  Cell(out, "max", std::to_string(w.max_replicas));
  Cell(out, "desired", std::to_string(w.desired));
  Cell(out, "current", std::to_string(w.current));
  Cell(out, "ready", std::to_string(w.ready));
  out += "<td data-field=\"replicas\">" + Sparkline(w.history, now_s) + "</td>";
  Cell(out, "rule", w.last ? w.last->recommendation.rule : "-", false);
  Cell(out, "age", w.rule_since_s > 0 ? AgeText(now_s - w.rule_since_s) : "-");
  StateCell(out, w);
  out += "</tr>";
}

std::string Summary(const std::vector<WorkloadView>& all, bool ready) {
  size_t steered = 0, unfresh = 0;
  for (const WorkloadView& w : all) {
    steered += w.steering.mode != SteerMode::kNone;
    unfresh += std::any_of(w.signals.begin(), w.signals.end(),
                           [](const SignalView& s) { return s.status != SignalStatus::kOk; });
  }
  std::string s = "<p class=\"summary\"><span data-field=\"count\">" + std::to_string(all.size()) +
                  "</span> workloads, <span data-field=\"steered\">" + std::to_string(steered) +
                  "</span> paused or pinned, <span data-field=\"unfresh\">" +
                  std::to_string(unfresh) + "</span> with a signal missing or stale";
  if (!ready) s += "; waiting for the first tick";
  return s + "</p>";
}

}  // namespace

Reply OverviewPage(const LiveView& view, WallTime now, const PageParams& p) {
  std::vector<WorkloadView> all = view.Workloads();
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.ref.Key() < b.ref.Key(); });
  const double now_s = ToSeconds(now.time_since_epoch());
  std::string main;
  main.reserve(1024 + all.size() * 1400);
  main += Summary(all, view.Ready());
  main +=
      "<table class=\"workloads\" id=\"workloads\"><thead><tr><th>Workload</th><th>Engine</th>"
      "<th>Policy</th><th>Signals (current/target)</th><th>Min</th><th>Max</th>"
      "<th>Desired</th><th>Current</th><th>Ready</th><th>Replicas</th><th>Rule</th>"
      "<th>Age</th><th>State</th></tr></thead><tbody>";
  for (const WorkloadView& w : all) Row(main, w, now_s);
  main += "</tbody></table>";
  if (p.fragment) return Reply{200, std::move(main), kHtmlType};
  return Reply{200, PageFrame("workloads", "<span>workloads</span>", main), kHtmlType};
}

}  // namespace aiscale::server
