// RateSeriesSource: requests drawn as a seeded Poisson process whose rate follows a (time,
// rate) series, piecewise constant: rate[i] holds from t[i] to t[i+1], and the last point
// ends the series. Every request has the configured input/output token counts.
//
// Why: for load shapes that exist only as a rate (a QPS series, a synthetic ramp) and for
// the 10 M-request benchmark. Exact: because the process is memoryless, an exponential gap
// that crosses a segment boundary is redrawn from the boundary at the next rate.
// Points may come inline or from a CSV file with columns `t_s` and `rate_per_s`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/traces/trace_request.h"

namespace aiscale::sim::traces {

struct RatePoint {
  double t_s = 0;
  double rate_per_s = 0;
};

struct RateSeriesOptions {
  std::vector<RatePoint> points;  // strictly increasing t_s, rate >= 0, at least two points
  uint32_t input_tokens = 512;
  uint32_t output_tokens = 128;
  uint64_t seed = 1;
};

// Fails when the series is not valid (names the offending point).
Result<std::unique_ptr<RequestSource>> RateSeries(RateSeriesOptions options);
// Reads `t_s,rate_per_s` rows; errors name file, line and field.
Result<std::vector<RatePoint>> LoadRateSeriesCsv(const std::string& path);

}  // namespace aiscale::sim::traces
