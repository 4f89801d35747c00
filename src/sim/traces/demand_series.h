// DemandSeries: how many GPUs a tenant asks for over time, as a step function: point i's value
// holds from its t_s until the next point's, and the last one until end_s.
//
// Why: a tenant of a shared pool (a virtual cluster of a training cluster) is described by its
// demand curve, not by requests; the Helios traces give it per minute (helios_trace.h), tests
// give a few points inline. Every series that leaves this file is valid: at least one point,
// the first at t_s = 0, times strictly increasing, end_s past the last point, every value within
// [0, kMaxDemandGpus], at most kMaxDemandPoints points (docs/limits.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace aiscale::sim::traces {

// One tenant's demand may not exceed this many GPUs at any time (the most replicas a workload
// may have), nor have more than this many points (3.8 years of minutes).
inline constexpr int64_t kMaxDemandGpus = 1'000'000;
inline constexpr size_t kMaxDemandPoints = 2'000'000;

struct DemandPoint {
  double t_s = 0;    // seconds from the series' start
  int64_t gpus = 0;  // GPUs asked for from t_s until the next point
};

struct DemandSeries {
  std::vector<DemandPoint> points;
  double end_s = 0;

  // The index of the point in force at t_s (the last with t_s <= t; 0 before the first).
  size_t IndexAt(double t_s) const;
  int64_t GpusAt(double t_s) const { return points[IndexAt(t_s)].gpus; }
};

// Checks the promises above; errors name `what` and the offending point.
Status ValidateDemand(const DemandSeries& s, const std::string& what);

// The part of `s` from start_s for duration_s (0: to the end), shifted to start at 0. Fails when
// the window starts at or after the series' end.
Result<DemandSeries> DemandWindow(const DemandSeries& s, double start_s, double duration_s);

}  // namespace aiscale::sim::traces
