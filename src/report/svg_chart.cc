#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/format.h"

namespace aiscale::report {
namespace {

// Margins inside the viewBox: y labels on the left, time labels below.
constexpr double kLeft = 52, kRight = 64, kTop = 10, kBottom = 22;

std::string Num(double v) { return FormatFixed(v, 1); }

// Tick step for a time axis of `t_max_s`: at most ~10 ticks, on round minutes or hours.
double TimeStep(double t_max_s) {
  for (double s : {60.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 4 * 3600.0, 6 * 3600.0,
                   12 * 3600.0, 24 * 3600.0, 48 * 3600.0}) {
    if (t_max_s / s <= 10) return s;
  }
  return 7 * 24 * 3600.0;
}

std::string TimeLabel(double t_s) {
  const long m = std::lround(t_s / 60);
  if (m % 60 == 0) return std::to_string(m / 60) + "h";
  if (m < 60) return std::to_string(m) + "m";
  return std::to_string(m / 60) + "h" + std::to_string(m % 60) + "m";
}

// A tick value with as few decimals as it needs (ticks are round: k x 10^e, k in 1, 2, 2.5, 5).
std::string ValueLabel(double v) {
  for (int d = 0; d < 6; ++d) {
    const double scaled = v * std::pow(10.0, d);
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) {
      return FormatFixed(v, d);
    }
  }
  return FormatFixed(v, 6);
}

}  // namespace

double NiceCeil(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * p >= v * (1 - 1e-12)) return m * p;
  }
  return 10 * p;
}

std::string CompactNumber(double v) {
  if (!std::isfinite(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

SvgChart::SvgChart(double t_max_s, double y_max, int width, int height)
    : t_max_s_(t_max_s > 0 ? t_max_s : 1),
      y_max_(4 * NiceCeil(y_max / 4)),
      width_(width),
      height_(height) {}

SvgChart SvgChart::Values(double x_max, double y_max, int width, int height) {
  SvgChart c(4 * NiceCeil(x_max / 4), y_max, width, height);
  c.value_x_ = true;
  return c;
}

SvgChart SvgChart::ValuesLog(double x_max, double y_min, double y_max, int width, int height) {
  SvgChart c = Log(4 * NiceCeil(x_max / 4), y_min, y_max, width, height);
  c.value_x_ = true;
  return c;
}

void SvgChart::AddDot(double x, double v, std::string_view color, std::string_view title,
                      std::string_view attrs) {
  marks_ += "<circle class=\"dot\"" + (attrs.empty() ? "" : " " + std::string(attrs)) + " cx=\"" +
            Num(X(x)) + "\" cy=\"" + Num(Y(v)) + "\" r=\"4\" fill=\"" + EscapeHtml(color) + "\">" +
            (title.empty() ? "" : "<title>" + EscapeHtml(title) + "</title>") + "</circle>";
}

SvgChart SvgChart::Log(double t_max_s, double y_min, double y_max, int width, int height) {
  SvgChart c(t_max_s, 1, width, height);
  c.log_ = true;
  c.log_lo_ = std::floor(std::log10(y_min > 0 && std::isfinite(y_min) ? y_min : 0.1));
  c.log_hi_ =
      std::max(c.log_lo_ + 1, std::ceil(std::log10(y_max > 0 && std::isfinite(y_max) ? y_max : 1)));
  c.y_max_ = std::pow(10.0, c.log_hi_);
  return c;
}

double SvgChart::X(double t_s) const {
  return kLeft + (width_ - kLeft - kRight) * std::clamp(t_s / t_max_s_, 0.0, 1.0);
}

double SvgChart::Y(double v) const {
  double f = v / y_max_;
  if (log_) f = v > 0 ? (std::log10(v) - log_lo_) / (log_hi_ - log_lo_) : 0;
  return kTop + (height_ - kTop - kBottom) * (1 - std::clamp(f, 0.0, 1.0));
}

void SvgChart::AddBand(double t0_s, double t1_s, std::string_view fill) {
  const double x0 = X(t0_s), w = std::max(0.5, X(t1_s) - x0);
  bands_ += "<rect x=\"" + Num(x0) + "\" y=\"" + Num(kTop) + "\" width=\"" + Num(w) +
            "\" height=\"" + Num(height_ - kTop - kBottom) + "\" fill=\"" + EscapeHtml(fill) +
            "\"/>";
}

std::vector<ChartPoint> DropRepeats(const std::vector<ChartPoint>& pts, bool step) {
  std::vector<ChartPoint> out;
  out.reserve(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) {
    const bool gap = !std::isfinite(pts[i].v);
    if (i > 0 && i + 1 < pts.size() && !out.empty()) {
      const double prev = out.back().v;
      if (gap && !std::isfinite(prev)) continue;       // a gap goes on
      if (step && !gap && pts[i].v == prev) continue;  // the held value goes on
    }
    out.push_back(pts[i]);
  }
  return out;
}

std::vector<ChartPoint> SvgChart::Thin(const std::vector<ChartPoint>& pts) const {
  if (pts.size() <= 2 * static_cast<size_t>(width_)) return pts;
  std::vector<ChartPoint> out;
  size_t i = 0;
  while (i < pts.size()) {
    if (!std::isfinite(pts[i].v)) {
      out.push_back(pts[i++]);
      continue;
    }
    const double col = std::floor(X(pts[i].t_s));
    size_t lo = i, hi = i, j = i;
    for (; j < pts.size() && std::isfinite(pts[j].v) && std::floor(X(pts[j].t_s)) == col; ++j) {
      if (pts[j].v < pts[lo].v) lo = j;
      if (pts[j].v > pts[hi].v) hi = j;
    }
    size_t last = pts.size();  // none yet; the three indices are in time order
    for (size_t k : {std::min(lo, hi), std::max(lo, hi), j - 1}) {
      if (k != last) out.push_back(pts[k]);
      last = k;
    }
    i = j;
  }
  return out;
}

void SvgChart::AddSeries(const ChartSeries& s) {
  std::string d, pts;
  bool open = false;  // a subpath is under way
  double prev = 0;
  for (const ChartPoint& p : Thin(DropRepeats(s.points, s.step))) {
    // Hover data: every drawn point, and a gap as "t -" so a hover there says "no value".
    if (!pts.empty()) pts += ' ';
    pts += CompactNumber(std::round(p.t_s));
    pts += ' ';
    pts += std::isfinite(p.v) ? CompactNumber(p.v) : std::string("-");
    if (!std::isfinite(p.v)) {
      open = false;
      continue;
    }
    const std::string x = Num(X(p.t_s));
    if (!open) {
      d += "M" + x + " " + Num(Y(p.v));
    } else {
      if (s.step) d += "L" + x + " " + Num(Y(prev));
      d += "L" + x + " " + Num(Y(p.v));
    }
    open = true;
    prev = p.v;
  }
  series_ += "<path class=\"series\"" + (s.attrs.empty() ? "" : " " + s.attrs) + " d=\"" + d +
             "\" fill=\"none\" stroke=\"" + EscapeHtml(s.color) + "\" stroke-width=\"" +
             FormatShort(s.width, 2) + "\"" +
             (s.opacity < 1 ? " stroke-opacity=\"" + FormatShort(s.opacity, 2) + "\"" : "") +
             (s.dashed ? " stroke-dasharray=\"5 3\"" : "") +
             (s.label.empty() ? "" : " data-label=\"" + EscapeHtml(s.label) + "\"") +
             (s.step ? " data-step=\"1\"" : "") + " data-pts=\"" + pts + "\"/>";
}

void SvgChart::AddHLine(double v, std::string_view color, std::string_view label,
                        std::string_view attrs) {
  const std::string y = Num(Y(v)), c = EscapeHtml(color);
  refs_ += "<line class=\"ref\"" + (attrs.empty() ? "" : " " + std::string(attrs)) + " x1=\"" +
           Num(kLeft) + "\" x2=\"" + Num(width_ - kRight) + "\" y1=\"" + y + "\" y2=\"" + y +
           "\" stroke=\"" + c + "\" stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>";
  refs_ += "<text x=\"" + Num(width_ - kRight + 4) + "\" y=\"" + Num(Y(v) + 4) +
           "\" style=\"fill:" + c + "\">" + EscapeHtml(label) + "</text>";
}

void SvgChart::AddVLine(double t_s, std::string_view color, std::string_view attrs) {
  const std::string x = Num(X(t_s));
  marks_ += "<line class=\"event\"" + (attrs.empty() ? "" : " " + std::string(attrs)) + " x1=\"" +
            x + "\" x2=\"" + x + "\" y1=\"" + Num(kTop) + "\" y2=\"" + Num(height_ - kBottom) +
            "\" stroke=\"" + EscapeHtml(color) +
            "\" stroke-width=\"1.5\" stroke-dasharray=\"4 2\"/>";
}

void SvgChart::AddMarker(double t_s, std::string_view color, std::string_view title,
                         std::string_view attrs) {
  const double x = X(t_s);
  marks_ += "<path class=\"marker\"" + (attrs.empty() ? "" : " " + std::string(attrs)) + " d=\"M" +
            Num(x - 4) + " " + Num(kTop) + "L" + Num(x + 4) + " " + Num(kTop) + "L" + Num(x) + " " +
            Num(kTop + 7) + "Z\" fill=\"" + EscapeHtml(color) + "\">" +
            (title.empty() ? "" : "<title>" + EscapeHtml(title) + "</title>") + "</path>";
}

std::string SvgChart::Svg() const {
  // The geometry the page's hover script maps a pointer position to a time with.
  std::string s = "<svg class=\"chart\" width=\"100%\" viewBox=\"0 0 " + std::to_string(width_) +
                  " " + std::to_string(height_) + "\" role=\"img\" data-t-max=\"" +
                  CompactNumber(t_max_s_) + (value_x_ ? "\" data-x-kind=\"value" : "") +
                  "\" data-x0=\"" + Num(kLeft) + "\" data-x1=\"" + Num(width_ - kRight) + "\">";
  s += bands_;
  std::vector<double> ticks;
  if (log_) {
    for (double e = log_lo_; e <= log_hi_ + 1e-9; ++e) ticks.push_back(std::pow(10.0, e));
  } else {
    for (int k = 0; k <= 4; ++k) ticks.push_back(y_max_ * k / 4);
  }
  for (double v : ticks) {
    const std::string y = Num(Y(v));
    s += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(width_ - kRight) + "\" y1=\"" + y +
         "\" y2=\"" + y + "\" stroke=\"#e6e6e6\"/>";
    s += "<text x=\"" + Num(kLeft - 4) + "\" y=\"" + Num(Y(v) + 4) + "\" text-anchor=\"end\">" +
         ValueLabel(v) + "</text>";
  }
  // x ticks: round minutes or hours on a time axis, four round steps on a value axis.
  const double step = value_x_ ? t_max_s_ / 4 : TimeStep(t_max_s_);
  for (double t = 0; t <= t_max_s_ + 1e-9; t += step) {
    s += "<text x=\"" + Num(X(t)) + "\" y=\"" + Num(height_ - 6.0) + "\" text-anchor=\"middle\">" +
         (value_x_ ? ValueLabel(t) : TimeLabel(t)) + "</text>";
  }
  s += series_ + refs_ + marks_;
  // Moved by the page script under the pointer; hidden until then (and without script).
  s += "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"" + Num(kTop) + "\" y2=\"" +
       Num(height_ - kBottom) + "\" stroke=\"#666\" visibility=\"hidden\"/>";
  s += "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(kTop) + "\" width=\"" +
       Num(width_ - kLeft - kRight) + "\" height=\"" + Num(height_ - kTop - kBottom) +
       "\" fill=\"none\" stroke=\"#999\"/></svg>";
  return s;
}

}  // namespace aiscale::report
