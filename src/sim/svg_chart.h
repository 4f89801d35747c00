// SvgChart: one time-series chart as an inline <svg> element, for report.html.
//
// Why: the report must open from disk anywhere with nothing fetched and nothing run, so the
// charts are drawn here, as static SVG text, rather than by a script in the page. That also
// lets a test read what was drawn (one <path class="series"> per series, with the caller's
// data-* attributes) straight from the HTML.
//
// Time runs along x from 0 to `t_max_s` (ticks in minutes or hours). One y axis: linear from 0
// to `y_max` rounded up to four round steps, or (Log) logarithmic over whole decades, for
// latencies that span several. Pure string building: no I/O, no state beyond what was added.
//
// Example:
//   SvgChart c(3600, 20);
//   c.AddSeries({.points = {{0, 3}, {60, 5}}, .color = "#1f77b4", .dashed = false,
//                .step = true, .attrs = "data-policy=\"hpa\""});
//   c.AddHLine(2, "#d62728", "SLO 2 s", "data-ref=\"slo\"");
//   std::string svg = c.Svg();
//
// Thread safety: none needed; an SvgChart is built and rendered by one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aiscale::sim {

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
};

class SvgChart {
 public:
  // Linear y from 0 to `y_max` rounded up (four gridlines on round values); <= 0 is taken as 1.
  SvgChart(double t_max_s, double y_max, int width = 960, int height = 190);
  // Logarithmic y over the decades that hold [y_min, y_max] (y_min > 0; values at or below the
  // bottom decade are drawn on the bottom edge).
  static SvgChart Log(double t_max_s, double y_min, double y_max, int width = 960,
                      int height = 190);

  void AddBand(double t0_s, double t1_s, std::string_view fill);  // shaded background span
  void AddSeries(const ChartSeries& s);
  // A horizontal reference line across the chart, labelled at its right end.
  void AddHLine(double v, std::string_view color, std::string_view label, std::string_view attrs);
  void AddVLine(double t_s, std::string_view color, std::string_view attrs);  // dashed
  void AddMarker(double t_s, std::string_view color);  // a small triangle on the top edge

  std::string Svg() const;

 private:
  double X(double t_s) const;
  double Y(double v) const;
  // Long series (more than two points per unit of width) keep, per unit-wide column of x, the
  // lowest, the highest and the last point: the drawn envelope is the same, the file smaller.
  std::vector<ChartPoint> Thin(const std::vector<ChartPoint>& pts) const;

  double t_max_s_, y_max_;
  bool log_ = false;
  double log_lo_ = 0, log_hi_ = 1;  // log10 of the bottom and top of a log axis
  int width_, height_;
  std::string bands_, series_, refs_, marks_;
};

// The smallest of 1, 2, 2.5, 5 x 10^k that is >= v (v <= 0 gives 1): a readable axis step.
double NiceCeil(double v);
// `s` with & < > " ' replaced by entities, for HTML text and attribute values.
std::string EscapeHtml(std::string_view s);
// printf-style "%.<decimals>f" of v; "" for NaN.
std::string FormatFixed(double v, int decimals);

}  // namespace aiscale::sim
