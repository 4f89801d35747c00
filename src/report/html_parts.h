// Pieces report.html's sections share: run colours, attributes, legend keys, a timeline field
// as chart points, a decision's reason in one line. Internal to the report layer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/comparison.h"
#include "report/run_summary.h"
#include "report/svg_chart.h"

namespace aiscale::report::html {

// One run of a workload's section: the run, its place in Report::runs (its colour), and the
// workload as that run ran it.
struct RunView {
  const RunSummary* run;
  size_t index;
  const WorkloadSummary* w;
};
using RunViews = std::vector<RunView>;

inline constexpr const char* kRed = "#d62728";
inline constexpr const char* kGrey = "#999999";
// One colour per run, in run order (no red: red is the SLO line and node failures).
const char* Colour(size_t i);

std::string Attr(std::string_view name, std::string_view value);
std::string Swatch(std::string_view colour);
std::string LineKey(std::string_view colour, std::string_view dash, double width = 2);
// A chart with its title, in a block the browser lays out only when it scrolls into view.
std::string Plot(const std::string& title_html, const std::string& svg);
// A legend entry that toggles every series with data-<attr>="<value>" in its section.
std::string Toggle(std::string_view attr, std::string_view value, const std::string& inner);

// `field` over a timeline; a missing value is 0, or a gap when `zero_is_gap` (a p99 of 0
// means nothing completed in that window, not an instant answer).
std::vector<ChartPoint> Points(const std::vector<TimelinePoint>& tl, double TimelinePoint::*field,
                               bool zero_is_gap = false);
// The latest timeline point of any run: the time axis every chart of a section shares.
double TMax(const RunViews& runs);
double MaxOf(const RunViews& runs, double TimelinePoint::*field);
double MaxOf(const std::vector<TimelinePoint>& tl, double TimelinePoint::*field);
// The oracle's plan as points (interval m starts at m x interval_s).
std::vector<ChartPoint> PlanPoints(const OraclePlan& plan);

// Why a decision came out as it did, in one line: the policy's reason, then what the
// stabilizer and the constraints changed, a veto, an engine error, signals without data.
std::string DecisionWhy(const Decision& d);
// "current -> constrained" and the reason of each shown scaling decision of `w` in `run`, as
// chart markers with that text as their tooltip.
void AddDecisionMarkers(const RunSummary& run, const std::string& workload, SvgChart& chart);

// The comparison table as HTML (one <tr data-key> per figure, cells marked "bad").
std::string TableHtml(const ComparisonTable& t);
// One line per verdict of `runs` (vs_static when `with_static`, vs_targets always).
std::string VerdictsHtml(const RunViews& runs, bool with_static);

}  // namespace aiscale::report::html
