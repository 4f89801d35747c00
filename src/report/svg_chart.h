// SvgChart: one time-series chart as an inline <svg> element, for report.html and any page
// that draws runs or live workloads (no server or simulator dependency).
//
// Why: a report must open from disk anywhere with nothing fetched, so charts are drawn here as
// SVG text rather than by a charting library. The SVG is complete without script; it also
// carries what a small script needs for hover values (report/page_assets.h): the chart's
// geometry on the <svg> (data-t-max, data-x0, data-x1) and each series' drawn points on its
// <path> (data-pts="t v t v ...", data-label). Tests read what was drawn from the same
// attributes (one <path class="series"> per series, with the caller's data-* attributes).
//
// Time runs along x from 0 to `t_max_s` (ticks in minutes or hours), or (Values) any quantity,
// for charts of one run against another such as cost against SLO attainment. One y axis:
// linear from 0 to `y_max` rounded up to four round steps, or (Log) logarithmic over whole
// decades, for latencies that span several. Pure string building: no I/O, no state beyond what
// was added.
//
// Example:
//   SvgChart c(3600, 20);
//   c.AddSeries({.points = {{0, 3}, {60, 5}}, .color = "#1f77b4", .step = true,
//                .attrs = "data-policy=\"hpa\"", .label = "hpa ready"});
//   c.AddHLine(2, "#d62728", "SLO 2 s", "data-ref=\"slo\"");
//   c.AddMarker(60, "#444", "1m: 3 -> 5, load above target");  // a tooltip on hover
//   std::string svg = c.Svg();
//
// Thread safety: none needed; an SvgChart is built and rendered by one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aiscale::report {

struct ChartPoint {
  double t_s = 0;
  double v = 0;  // NaN: no value here; the line breaks
};

struct ChartSeries {
  std::vector<ChartPoint> points;
  std::string color;
  bool dashed = false;
  bool step = false;  // hold each value until the next point (counts), else straight segments
  std::string attrs;  // extra attributes for the <path>, already escaped
  std::string label;  // what hover text calls it (escaped here)
  double width = 1.5;
  double opacity = 1;
};

class SvgChart {
 public:
  // Linear y from 0 to `y_max` rounded up (four gridlines on round values); <= 0 is taken as 1.
  SvgChart(double t_max_s, double y_max, int width = 960, int height = 190);
  // Logarithmic y over the decades that hold [y_min, y_max] (y_min > 0; values at or below the
  // bottom decade are drawn on the bottom edge).
  static SvgChart Log(double t_max_s, double y_min, double y_max, int width = 960,
                      int height = 190);
  // x is a value, not a time (e.g. GPU-hours against SLO attainment): x from 0 to `x_max`
  // rounded up to four round steps, labelled as numbers. Points' t_s are then x values.
  static SvgChart Values(double x_max, double y_max, int width = 620, int height = 240);
  // A value x axis (as Values) over a logarithmic y (as Log): e.g. GPU-hours against the share
  // of requests that missed the SLO, which spans decades.
  static SvgChart ValuesLog(double x_max, double y_min, double y_max, int width = 620,
                            int height = 240);

  void AddBand(double t0_s, double t1_s, std::string_view fill);  // shaded background span
  void AddSeries(const ChartSeries& s);
  // A horizontal reference line across the chart, labelled at its right end.
  void AddHLine(double v, std::string_view color, std::string_view label, std::string_view attrs);
  void AddVLine(double t_s, std::string_view color, std::string_view attrs);  // dashed
  // A small triangle on the top edge; `title` (if any) is its tooltip, e.g. why it happened.
  void AddMarker(double t_s, std::string_view color, std::string_view title = "",
                 std::string_view attrs = "");
  // A dot at (x, v), e.g. one run on a cost/SLO chart; `title` is its tooltip.
  void AddDot(double x, double v, std::string_view color, std::string_view title = "",
              std::string_view attrs = "");

  double y_max() const { return y_max_; }
  std::string Svg() const;

 private:
  double X(double t_s) const;
  double Y(double v) const;
  // Long series (more than two points per unit of width) keep, per unit-wide column of x, the
  // lowest, the highest and the last point: the drawn envelope is the same, the file smaller.
  std::vector<ChartPoint> Thin(const std::vector<ChartPoint>& pts) const;

  double t_max_s_, y_max_;
  bool log_ = false;
  bool value_x_ = false;            // x is a value axis (Values), not time
  double log_lo_ = 0, log_hi_ = 1;  // log10 of the bottom and top of a log axis
  int width_, height_;
  std::string bands_, series_, refs_, marks_;
};

// `pts` without the points that draw nothing new: inside a gap (NaN after NaN) and, for a step
// series, a value equal to the one before; the first and last points are kept.
std::vector<ChartPoint> DropRepeats(const std::vector<ChartPoint>& pts, bool step);
// The smallest of 1, 2, 2.5, 5 x 10^k that is >= v (v <= 0 gives 1): a readable axis step.
double NiceCeil(double v);
// "90", "0.25", "1.5e+04": at most 4 significant digits, for hover data.
std::string CompactNumber(double v);

}  // namespace aiscale::report
