// ReportHtml: report.html, one self-contained page drawn from a Report: nothing is fetched
// (a Content-Security-Policy forbids it), so it opens from disk anywhere, and it reads fully
// with scripts off (tables are HTML, charts static SVG: report/svg_chart.h).
//
// Layout: the scenario's header; with several workloads, the comparison of the runs' totals;
// then per workload (inference service or training job) its comparison table
// (report/comparison.h, the same one `aiscale simulate` prints), the verdicts with why a run
// fell short, a legend whose entries toggle series, and the charts (report/html_sections.h);
// then the searchable decision log. The page's one inline script (report/page_assets.h) adds
// hover values, the legend toggles and the log search.
//
// Every series is a <path class="series" data-chart="C" data-policy="RUN" ...> and every SLO
// line a <line class="ref" data-ref="slo" ...>, so tests (and people) can find them. Names from
// input files are escaped everywhere. Pure: a function of the report only.
#pragma once

#include <string>

#include "report/run_summary.h"

namespace aiscale::report {

std::string ReportHtml(const Report& r);

// The decision log alone: a search box, a run filter and a table with id `id` of every
// decision the runs show (RunSummary::decisions.shown), in run then tick order, inside a
// <details> that opens when asked (a click, a search, a run picked).
std::string DecisionLogHtml(const Report& r, const std::string& id);

}  // namespace aiscale::report
