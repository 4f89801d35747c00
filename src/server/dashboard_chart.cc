#include "server/dashboard_chart.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "server/html.h"

namespace aiscale::server {
namespace {

constexpr double kLeft = 44, kRight = 70, kTop = 8, kBottom = 20;

double NiceStep(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * p >= v * (1 - 1e-12)) return m * p;
  }
  return 10 * p;
}

// v with one decimal, as SVG coordinates need: integer arithmetic rather than printf, which
// was three quarters of the overview's time (1,000 sparklines of 256 numbers each).
void AppendFixed(std::string& out, double v) {
  if (!std::isfinite(v)) v = 0;
  long tenths = std::lround(v * 10);
  if (tenths < 0) {
    out += '-';
    tenths = -tenths;
  }
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, tenths / 10);
  (void)ec;
  out.append(buf, end);
  out += '.';
  out += static_cast<char>('0' + tenths % 10);
}

std::string Fixed(double v) {
  std::string s;
  AppendFixed(s, v);
  return s;
}

// A time tick step with at most ~8 ticks on round minutes or hours.
double TimeStep(double span_s) {
  for (double s : {60.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 3 * 3600.0, 6 * 3600.0}) {
    if (span_s / s <= 8) return s;
  }
  return 12 * 3600.0;
}

}  // namespace

std::string ClockLabel(double wall_s) {
  const time_t t = static_cast<time_t>(std::floor(wall_s));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d:%02d", tm.tm_hour, tm.tm_min);
  return buf;
}

TimeChart::TimeChart(double t0_s, double t1_s, double y_max, int width, int height)
    : t0_(t0_s),
      t1_(t1_s > t0_s ? t1_s : t0_s + 1),
      y_max_(NiceStep(y_max > 0 ? y_max / 4 : 0.25) * 4),
      width_(width),
      height_(height) {}

double TimeChart::X(double t) const {
  const double f = std::clamp((t - t0_) / (t1_ - t0_), 0.0, 1.0);
  return kLeft + f * (width_ - kLeft - kRight);
}

double TimeChart::Y(double v) const {
  const double f = std::clamp(v / y_max_, 0.0, 1.0);
  return height_ - kBottom - f * (height_ - kTop - kBottom);
}

std::string TimeChart::Path(const std::vector<ChartPt>& pts, bool step) const {
  std::string d;
  bool pen_down = false;
  for (const ChartPt& p : pts) {
    if (!std::isfinite(p.v)) {
      pen_down = false;  // a gap: the line breaks here
      continue;
    }
    const double x = X(p.wall_s), y = Y(p.v);
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "M" + string.
    if (!pen_down || !step) {
      d += pen_down ? 'L' : 'M';
      AppendFixed(d, x);
      d += ' ';
    } else {
      d += 'H';
      AppendFixed(d, x);
      d += 'V';
    }
    AppendFixed(d, y);
    pen_down = true;
  }
  return d;
}

void TimeChart::AddLine(const std::vector<ChartPt>& pts, std::string_view css,
                        std::string_view label, bool step) {
  const std::string d = Path(pts, step);
  lines_ += "<path class=\"series " + EscapeHtml(css) + "\" data-points=\"" +
            std::to_string(pts.size()) + "\" d=\"" + d + "\"/>";
  legend_ += "<span class=\"key " + EscapeHtml(css) + "\">" + EscapeHtml(label) + "</span>";
  ++series_count_;
}

void TimeChart::AddBand(const std::vector<ChartPt>& lo, const std::vector<ChartPt>& hi,
                        std::string_view css, std::string_view label) {
  std::string d;
  for (const ChartPt& p : hi) {
    if (!std::isfinite(p.v)) continue;
    d += d.empty() ? 'M' : 'L';
    AppendFixed(d, X(p.wall_s));
    d += ' ';
    AppendFixed(d, Y(p.v));
  }
  for (auto it = lo.rbegin(); it != lo.rend(); ++it) {
    if (!std::isfinite(it->v)) continue;
    d += 'L';
    AppendFixed(d, X(it->wall_s));
    d += ' ';
    AppendFixed(d, Y(it->v));
  }
  if (d.empty()) return;
  bands_ += "<path class=\"band " + EscapeHtml(css) + "\" d=\"" + d + "Z\"/>";
  legend_ += "<span class=\"key " + EscapeHtml(css) + "\">" + EscapeHtml(label) + "</span>";
}

void TimeChart::AddHLine(double v, std::string_view css, std::string_view label) {
  if (!std::isfinite(v)) return;
  const std::string y = Fixed(Y(v));
  refs_ += "<line class=\"ref " + EscapeHtml(css) + "\" x1=\"" + Fixed(kLeft) + "\" x2=\"" +
           Fixed(width_ - kRight) + "\" y1=\"" + y + "\" y2=\"" + y +
           "\"/><text class=\"reflabel\" x=\"" + Fixed(width_ - kRight + 4) + "\" y=\"" + y +
           "\">" + EscapeHtml(label) + "</text>";
}

void TimeChart::AddSpan(double t0_s, double t1_s, std::string_view css, std::string_view title) {
  const double x0 = X(t0_s), x1 = X(t1_s);
  if (x1 <= x0) return;
  spans_ += "<rect class=\"span " + EscapeHtml(css) + "\" x=\"" + Fixed(x0) + "\" y=\"" +
            Fixed(kTop) + "\" width=\"" + Fixed(x1 - x0) + "\" height=\"" +
            Fixed(height_ - kTop - kBottom) + "\"><title>" + EscapeHtml(title) + "</title></rect>";
}

std::string TimeChart::Svg(std::string_view title) const {
  std::string axes;
  for (int i = 0; i <= 4; ++i) {
    const double v = y_max_ * i / 4;
    const std::string y = Fixed(Y(v));
    axes += "<line class=\"grid\" x1=\"" + Fixed(kLeft) + "\" x2=\"" + Fixed(width_ - kRight) +
            "\" y1=\"" + y + "\" y2=\"" + y + "\"/><text class=\"ylabel\" x=\"" + Fixed(kLeft - 4) +
            "\" y=\"" + y + "\">" + ShortNumber(v) + "</text>";
  }
  const double step = TimeStep(t1_ - t0_);
  for (double t = std::ceil(t0_ / step) * step; t <= t1_; t += step) {
    axes += "<text class=\"xlabel\" x=\"" + Fixed(X(t)) + "\" y=\"" + Fixed(height_ - 4.0) + "\">" +
            ClockLabel(t) + "</text>";
  }
  std::string out = "<figure class=\"chart\"><figcaption>" + EscapeHtml(title) +
                    " <span class=\"legend\">" + legend_ + "</span></figcaption>";
  out += "<svg viewBox=\"0 0 " + std::to_string(width_) + " " + std::to_string(height_) +
         "\" role=\"img\"><title>" + EscapeHtml(title) + "</title>" + spans_ + axes + bands_ +
         refs_ + lines_ + "</svg></figure>";
  return out;
}

std::string Sparkline(const std::vector<ScalePoint>& history, double now_s, int width, int height) {
  if (history.empty()) return "";
  const double t1 = std::max(now_s, history.back().wall_s);
  const double t0 = std::min(history.front().wall_s, t1 - 60);
  int top = 1;
  for (const ScalePoint& p : history) top = std::max({top, p.desired, p.ready});
  const double sx = (width - 2) / (t1 - t0), sy = (height - 4.0) / top;
  // One step path of `field` (desired or ready), appended to `out`.
  const auto path = [&](std::string& out, int ScalePoint::*field) {
    out += "M";
    AppendFixed(out, 1 + (history.front().wall_s - t0) * sx);
    out += ' ';
    AppendFixed(out, height - 2 - history.front().*field * sy);
    for (const ScalePoint& p : history) {
      out += 'H';
      AppendFixed(out, 1 + (p.wall_s - t0) * sx);
      out += 'V';
      AppendFixed(out, height - 2 - p.*field * sy);
    }
    out += 'H';
    AppendFixed(out, width - 1.0);
  };
  std::string out;
  out.reserve(200 + history.size() * 40);
  out += "<svg class=\"spark\" viewBox=\"0 0 " + std::to_string(width) + " " +
         std::to_string(height) + "\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) + "\" role=\"img\"><title>replicas: desired ";
  out += std::to_string(history.back().desired) + ", ready " +
         std::to_string(history.back().ready) + "</title><path class=\"ready\" d=\"";
  path(out, &ScalePoint::ready);
  out += "\"/><path class=\"desired\" d=\"";
  path(out, &ScalePoint::desired);
  out += "\"/></svg>";
  return out;
}

}  // namespace aiscale::server
