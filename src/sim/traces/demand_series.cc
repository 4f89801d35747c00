#include "sim/traces/demand_series.h"

#include <algorithm>
#include <cmath>

namespace aiscale::sim::traces {

size_t DemandSeries::IndexAt(double t_s) const {
  auto it = std::upper_bound(points.begin(), points.end(), t_s,
                             [](double t, const DemandPoint& p) { return t < p.t_s; });
  return it == points.begin() ? 0 : static_cast<size_t>(it - points.begin() - 1);
}

Status ValidateDemand(const DemandSeries& s, const std::string& what) {
  auto bad = [&](size_t i, const std::string& msg) {
    return Status::Invalid(what + ": point " + std::to_string(i) + ": " + msg);
  };
  if (s.points.empty()) return Status::Invalid(what + ": no demand points");
  if (s.points.size() > kMaxDemandPoints) {
    return Status::Invalid(what + ": " + std::to_string(s.points.size()) + " points; at most " +
                           std::to_string(kMaxDemandPoints) + " (docs/limits.md)");
  }
  if (s.points.front().t_s != 0) return bad(0, "the first point must be at t = 0");
  for (size_t i = 0; i < s.points.size(); ++i) {
    const DemandPoint& p = s.points[i];
    if (!std::isfinite(p.t_s)) return bad(i, "time is not a finite number");
    if (i > 0 && !(p.t_s > s.points[i - 1].t_s)) return bad(i, "time must increase");
    if (p.gpus < 0 || p.gpus > kMaxDemandGpus) {
      return bad(i, "demand " + std::to_string(p.gpus) + " GPUs is outside [0, " +
                        std::to_string(kMaxDemandGpus) + "] (docs/limits.md)");
    }
  }
  if (!std::isfinite(s.end_s) || !(s.end_s > s.points.back().t_s)) {
    return Status::Invalid(what + ": the series must end after its last point");
  }
  return Status::Ok();
}

Result<DemandSeries> DemandWindow(const DemandSeries& s, double start_s, double duration_s) {
  if (start_s == 0 && duration_s == 0) return s;
  if (!(start_s < s.end_s)) {
    return Status::Invalid("the window starts at " + std::to_string(start_s) +
                           " s, at or after the series' end (" + std::to_string(s.end_s) + " s)");
  }
  const double end = duration_s > 0 ? std::min(s.end_s, start_s + duration_s) : s.end_s;
  DemandSeries out;
  out.end_s = end - start_s;
  for (size_t i = s.IndexAt(start_s); i < s.points.size() && s.points[i].t_s < end; ++i) {
    out.points.push_back({std::max(0.0, s.points[i].t_s - start_s), s.points[i].gpus});
  }
  return out;
}

}  // namespace aiscale::sim::traces
