// Dashboard charts as inline SVG, drawn on the server so a page shows its charts with
// JavaScript off and fetches nothing: a time chart over wall-clock time (x labelled in UTC
// hours and minutes) with lines, step lines, a shaded band (a forecast's error band), horizontal
// reference lines (targets, bounds) and shaded spans (training phases); and a replica sparkline.
//
// Unlike the simulator's report charts (sim/svg_chart.h: time from a run's start, colours
// inline), x is absolute wall time and every mark carries a CSS class, so the page's one style
// sheet colours them and a test can find each series by class. Text passes through EscapeHtml.
// Pure string building; a chart is built and rendered by one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/workload_view.h"

namespace aiscale::server {

struct ChartPt {
  double wall_s = 0;
  double v = 0;  // NaN: a gap
};

class TimeChart {
 public:
  // x from t0_s to t1_s (Unix seconds); y from 0 to y_max rounded up to a round step.
  TimeChart(double t0_s, double t1_s, double y_max, int width = 900, int height = 170);
  // `css` names the series (class="series <css>"); `label` goes into the legend.
  void AddLine(const std::vector<ChartPt>& pts, std::string_view css, std::string_view label,
               bool step);
  // A shaded band between lo and hi (same times), e.g. forecast ± error.
  void AddBand(const std::vector<ChartPt>& lo, const std::vector<ChartPt>& hi, std::string_view css,
               std::string_view label);
  void AddHLine(double v, std::string_view css, std::string_view label);
  void AddSpan(double t0_s, double t1_s, std::string_view css, std::string_view title);
  // `title` is shown above the chart and as the <svg>'s <title>.
  std::string Svg(std::string_view title) const;
  size_t series() const { return series_count_; }

 private:
  double X(double t) const;
  double Y(double v) const;
  std::string Path(const std::vector<ChartPt>& pts, bool step) const;

  double t0_, t1_, y_max_;
  int width_, height_;
  size_t series_count_ = 0;
  std::string spans_, bands_, lines_, refs_, legend_;
};

// A small step line of desired (and ready, dashed) over the last points; "" when fewer than
// one point.
std::string Sparkline(const std::vector<ScalePoint>& history, double now_s, int width = 120,
                      int height = 22);

// "HH:MM" of Unix seconds, UTC.
std::string ClockLabel(double wall_s);

}  // namespace aiscale::server
