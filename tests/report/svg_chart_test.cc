#include "report/svg_chart.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report/format.h"

namespace aiscale::report {
namespace {

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// The d="..." of the first series path.
std::string PathData(const std::string& svg) {
  const size_t p = svg.find("class=\"series\"");
  const size_t d = svg.find(" d=\"", p) + 4;
  return svg.substr(d, svg.find('"', d) - d);
}

TEST(SvgChart, NiceCeil) {
  struct Case {
    double v, want;
  };
  const std::vector<Case> cases = {{0, 1},     {-3, 1},    {0.7, 1},      {1, 1},
                                   {1.01, 2},  {2.2, 2.5}, {3, 5},        {7, 10},
                                   {12.5, 20}, {25, 25},   {0.031, 0.05}, {4100, 5000}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.v);
    EXPECT_DOUBLE_EQ(NiceCeil(c.v), c.want);
  }
}

TEST(SvgChart, EscapesAndFormats) {
  EXPECT_EQ(EscapeHtml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(FormatFixed(2.345, 2), "2.35");
  EXPECT_EQ(FormatFixed(std::numeric_limits<double>::quiet_NaN(), 2), "");
}

TEST(SvgChart, SeriesShapes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* name;
    std::vector<ChartPoint> points;
    bool step;
    size_t moves, lines;
  };
  const std::vector<Case> cases = {
      {"straight", {{0, 1}, {10, 2}, {20, 3}}, false, 1, 2},
      {"step holds the previous value", {{0, 1}, {10, 2}, {20, 3}}, true, 1, 4},
      {"NaN breaks the line", {{0, 1}, {10, nan}, {20, 3}, {30, 4}}, false, 2, 1},
      {"all missing", {{0, nan}}, false, 0, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    SvgChart chart(30, 4);
    chart.AddSeries({c.points, "#123456", false, c.step, "data-x=\"1\"", "", 1.5, 1});
    const std::string svg = chart.Svg();
    const std::string d = PathData(svg);
    EXPECT_EQ(Count(d, "M"), c.moves) << d;
    EXPECT_EQ(Count(d, "L"), c.lines) << d;
    EXPECT_NE(svg.find("class=\"series\" data-x=\"1\""), std::string::npos);
  }
}

TEST(SvgChart, LongSeriesKeepTheirEnvelope) {
  struct Case {
    const char* name;
    size_t n;
    size_t max_points;
  };
  const std::vector<Case> cases = {
      {"short: every point", 100, 100},
      {"long: at most three per column", 50000, 3 * 960},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<ChartPoint> pts;
    for (size_t i = 0; i < c.n; ++i) {
      // One spike to the top in the middle; the rest low.
      pts.push_back({static_cast<double>(i), i == c.n / 2 ? 100.0 : 1.0 + (i % 7) * 0.1});
    }
    SvgChart chart(static_cast<double>(c.n), 100);
    chart.AddSeries({pts, "#000", false, false, "", "", 1.5, 1});
    const std::string d = PathData(chart.Svg());
    const size_t points = Count(d, "M") + Count(d, "L");
    EXPECT_LE(points, c.max_points);
    if (c.n <= 2 * 960) {
      EXPECT_EQ(points, c.n);
    }
    EXPECT_NE(d.find(" 10.0L"), std::string::npos) << "the spike reaches the top (y = 10)";
  }
}

TEST(SvgChart, AxesAndReferenceLines) {
  struct Case {
    const char* name;
    SvgChart chart;
    std::vector<std::string> labels;  // y tick labels expected
  };
  std::vector<Case> cases = {
      {"linear rounds the top up to four round steps", SvgChart(3600, 31), {">0<", ">10<", ">40<"}},
      {"linear with fractional steps", SvgChart(3600, 9), {">2.5<", ">7.5<", ">10<"}},
      {"log over whole decades",
       SvgChart::Log(3600, 0.3, 120),
       {">0.1<", ">1<", ">100<", ">1000<"}},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    c.chart.AddHLine(20, "#d62728", "SLO 20 s", "data-ref=\"slo\"");
    c.chart.AddVLine(600, "#d62728", "data-event=\"failure\"");
    c.chart.AddMarker(900, "#444");
    const std::string svg = c.chart.Svg();
    for (const auto& l : c.labels) EXPECT_NE(svg.find(l), std::string::npos) << l;
    EXPECT_EQ(Count(svg, "data-ref=\"slo\""), 1u);
    EXPECT_EQ(Count(svg, "data-event=\"failure\""), 1u);
    EXPECT_EQ(Count(svg, "class=\"marker\""), 1u);
    EXPECT_NE(svg.find(">SLO 20 s<"), std::string::npos);
    EXPECT_NE(svg.find(">10m<"), std::string::npos);  // time ticks in minutes for an hour
    EXPECT_NE(svg.find(">1h<"), std::string::npos);
  }
}

TEST(SvgChart, HoverDataMatchesWhatIsDrawn) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SvgChart chart(120, 10);
  chart.AddSeries({{{0, 1}, {30.4, 2.5}, {60, nan}, {90, 1234567}},
                   "#000",
                   true,
                   true,
                   "data-kind=\"desired\"",
                   "hpa <desired>",
                   1,
                   0.5});
  chart.AddMarker(30, "#444", "3 -> 5: load > target", "data-event=\"rescale\"");
  const std::string svg = chart.Svg();
  // t rounded to seconds, values to 4 significant digits, a gap as "-".
  EXPECT_NE(svg.find("data-pts=\"0 1 30 2.5 60 - 90 1.235e+06\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("data-label=\"hpa &lt;desired&gt;\""), std::string::npos);
  EXPECT_NE(svg.find("data-step=\"1\""), std::string::npos);
  EXPECT_NE(svg.find("stroke-opacity=\"0.5\""), std::string::npos);
  EXPECT_NE(svg.find("<title>3 -&gt; 5: load &gt; target</title>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"chart\""), std::string::npos);
  EXPECT_NE(svg.find("data-t-max=\"120\" data-x0=\"52.0\" data-x1=\"896.0\""), std::string::npos);
  EXPECT_NE(svg.find("<line class=\"cursor\""), std::string::npos);
  EXPECT_EQ(CompactNumber(nan), "");
  EXPECT_EQ(CompactNumber(0.000125), "0.000125");
}

TEST(SvgChart, PointsThatDrawNothingNewAreDropped) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<ChartPoint> pts = {{0, 1},   {1, 1},   {2, 1},   {3, 2}, {4, 2},
                                       {5, nan}, {6, nan}, {7, nan}, {8, 3}, {9, 3}};
  auto times = [](const std::vector<ChartPoint>& v) {
    std::vector<double> t;
    for (const auto& p : v) t.push_back(p.t_s);
    return t;
  };
  // A step series holds its value: changes, the gap's start and the last point are enough.
  EXPECT_EQ(times(DropRepeats(pts, true)), (std::vector<double>{0, 3, 5, 8, 9}));
  // A line series keeps every value (a line between equal values is still a line), not a gap's.
  EXPECT_EQ(times(DropRepeats(pts, false)), (std::vector<double>{0, 1, 2, 3, 4, 5, 8, 9}));
  // A held value across the whole chart is one horizontal segment, first x to last x.
  std::vector<ChartPoint> held(1000);
  for (size_t i = 0; i < held.size(); ++i) held[i] = {static_cast<double>(i), 2};
  SvgChart flat(999, 4);
  flat.AddSeries({held, "#000", false, true, "", "", 1.5, 1});
  const std::string d = PathData(flat.Svg());
  EXPECT_EQ(Count(d, "M"), 1u) << d;
  EXPECT_EQ(Count(d, "L"), 2u) << d;  // the step's two segments to the last point
  EXPECT_NE(d.find("L896.0 "), std::string::npos) << d;  // it reaches the right edge
}

TEST(SvgChart, AValueAxisForOneRunAgainstAnother) {
  // GPU-hours along x (not time), attainment up: one dot per run, with its tooltip.
  SvgChart chart = SvgChart::Values(37, 1);
  chart.AddDot(18.4, 0.99, "#1f77b4", "predictive: 18.4 GPU-h, 0.9907", "data-policy=\"p\"");
  const std::string svg = chart.Svg();
  EXPECT_NE(svg.find("data-x-kind=\"value\""), std::string::npos);
  EXPECT_NE(svg.find("data-t-max=\"40\""), std::string::npos);  // 37 rounded up to 4 x 10
  for (const char* tick : {">0<", ">10<", ">20<", ">30<", ">40<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(svg.find(">1h<"), std::string::npos);  // no time labels
  EXPECT_NE(svg.find("<circle class=\"dot\" data-policy=\"p\" cx=\""), std::string::npos);
  EXPECT_NE(svg.find("<title>predictive: 18.4 GPU-h, 0.9907</title>"), std::string::npos);
}

}  // namespace
}  // namespace aiscale::report
