// report.html's decision log (report/report_html.h): every decision worth showing, searchable.
#include <cmath>

#include "report/format.h"
#include "report/html_parts.h"
#include "report/report_html.h"

namespace aiscale::report {
namespace {

std::string Clock(double t_s) {
  const long s = std::lround(std::max(0.0, t_s));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s % 3600 / 60, s % 60);
  return buf;
}

std::string Row(const RunSummary& run, const Decision& d) {
  using html::Attr;
  std::string h = "<tr " + Attr("data-run", run.label) + ">";
  h += "<td class=\"n\">" + Clock(SinceEpochSeconds(d.at)) + "</td>";
  h += "<td>" + EscapeHtml(run.label) + "</td><td>" + EscapeHtml(d.workload) + "</td>";
  h += "<td class=\"n\">" + std::to_string(d.current) + " &rarr; " + std::to_string(d.constrained) +
       " (" + std::to_string(d.ready) + " ready)</td>";
  h += "<td>" + EscapeHtml(d.vetoed ? "vetoed" : ActionName(d.action)) + "</td>";
  h += "<td>" + EscapeHtml(d.recommendation.rule) + "</td>";
  return h + "<td>" + EscapeHtml(html::DecisionWhy(d)) + "</td></tr>";
}

}  // namespace

std::string DecisionLogHtml(const Report& r, const std::string& id) {
  using html::Attr;
  size_t rows = 0, not_shown = 0, total = 0;
  std::string body;
  for (const RunSummary& run : r.runs) {
    for (const Decision& d : run.decisions.shown) {
      body += Row(run, d);
      ++rows;
    }
    not_shown += run.decisions.not_shown;
    total += run.decisions.total;
  }
  std::string h =
      "<h2>Decision log</h2><p class=\"meta\">Every scaling, failed apply and vetoed "
      "scale-down (" +
      std::to_string(rows) + " of " + std::to_string(total) + " decisions; the rest held the size";
  if (not_shown > 0) h += "; " + std::to_string(not_shown) + " more past the first 500 per run";
  h += "). Full logs: decisions-&lt;run&gt;.jsonl beside this file.</p>";
  h += "<div class=\"logbar\"><input type=\"search\" class=\"logq\" " + Attr("data-log", id) +
       " placeholder=\"search: a rule, a reason, a time...\"> <select class=\"logrun\" " +
       Attr("data-log", id) + "><option value=\"\">every run</option>";
  for (const RunSummary& run : r.runs) {
    h += "<option " + Attr("value", run.label) + ">" + EscapeHtml(run.label) + "</option>";
  }
  h += "</select> <span class=\"logcount\" " + Attr("data-log", id) + ">" + std::to_string(rows) +
       " shown</span></div>";
  // Closed until asked for (a search, a run picked, or a click): laying out thousands of rows
  // was most of a long report's rendering time.
  h += "<details class=\"logbox\" " + Attr("data-log", id) + "><summary>show the " +
       std::to_string(rows) + " decisions</summary><div class=\"log\"><table " + Attr("id", id) +
       "><thead><tr><th>time</th><th>run</th><th>workload</th><th>replicas</th><th>action</th>"
       "<th>rule</th><th>why</th></tr></thead><tbody>" +
       body + "</tbody></table></div></details>";
  return h;
}

}  // namespace aiscale::report
