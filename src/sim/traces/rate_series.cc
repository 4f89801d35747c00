#include "sim/traces/rate_series.h"

#include <cmath>
#include <random>

#include "core/numeric.h"

#include "sim/run_budget.h"
#include "sim/traces/csv_fields.h"
#include "sim/traces/line_reader.h"

namespace aiscale::sim::traces {
namespace {

class RateStream final : public RequestStream {
 public:
  explicit RateStream(const RateSeriesOptions& o) : o_(o), rng_(o.seed) {
    t_ = o_.points.front().t_s;
  }
  Status Next(std::vector<TraceRequest>& out, size_t max) override {
    const double origin = o_.points.front().t_s;
    size_t added = 0;
    while (added < max && seg_ + 1 < o_.points.size()) {
      const double rate = o_.points[seg_].rate_per_s;
      const double end = o_.points[seg_ + 1].t_s;
      if (rate <= 0) {
        t_ = end;
        ++seg_;
        continue;
      }
      const double gap = -std::log1p(-uniform_(rng_)) / rate;
      if (t_ + gap >= end) {
        t_ = end;  // memoryless: redraw from the boundary at the next rate
        ++seg_;
        continue;
      }
      t_ += gap;
      TraceRequest r;
      r.arrival_ns = SaturatingNanos(t_ - origin);
      r.input_tokens = o_.input_tokens;
      r.output_tokens = o_.output_tokens;
      out.push_back(r);
      ++added;
    }
    return Status::Ok();
  }

 private:
  RateSeriesOptions o_;  // a copy: the stream may outlive its source
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  size_t seg_ = 0;
  double t_ = 0;
};

class RateSource final : public RequestSource {
 public:
  explicit RateSource(RateSeriesOptions o) : o_(std::move(o)) {}
  Result<std::unique_ptr<RequestStream>> Open() const override {
    return std::unique_ptr<RequestStream>(std::make_unique<RateStream>(o_));
  }
  std::string Describe() const override {
    return "poisson rate series (" + std::to_string(o_.points.size()) + " points, seed " +
           std::to_string(o_.seed) + ")";
  }

 private:
  RateSeriesOptions o_;
};

}  // namespace

Result<std::unique_ptr<RequestSource>> RateSeries(RateSeriesOptions options) {
  const auto& p = options.points;
  if (p.size() < 2) return Status::Error("rate series needs at least two points (start and end)");
  for (size_t i = 0; i < p.size(); ++i) {
    const std::string at = "rate series point " + std::to_string(i);
    if (!std::isfinite(p[i].t_s) || !std::isfinite(p[i].rate_per_s) || p[i].rate_per_s < 0) {
      return Status::Error(at + ": rate_per_s must be a finite number >= 0");
    }
    if (i > 0 && !(p[i].t_s > p[i - 1].t_s)) {
      return Status::Error(at + ": t_s must increase (time goes backwards)");
    }
  }
  // Arrival times are integer nanoseconds since the first point, and a source is read whole
  // more than once (validation, each run, the oracle), so the span and the expected number of
  // requests are bounded.
  if (p.back().t_s - p.front().t_s > 1e9) {
    return Status::Error("rate series point " + std::to_string(p.size() - 1) +
                         ": t_s spans more than 1e9 s from the first point");
  }
  double expected = 0;
  for (size_t i = 0; i + 1 < p.size(); ++i) expected += p[i].rate_per_s * (p[i + 1].t_s - p[i].t_s);
  if (expected > static_cast<double>(kMaxRequestsPerWorkload)) {
    return Status::Error("rate series: expects " + std::to_string(expected) +
                         " requests (rate x time summed over the points); at most " +
                         std::to_string(kMaxRequestsPerWorkload) + " per run (docs/limits.md)");
  }
  if (options.output_tokens == 0) return Status::Error("rate series: output_tokens must be >= 1");
  return std::unique_ptr<RequestSource>(std::make_unique<RateSource>(std::move(options)));
}

Result<std::vector<RatePoint>> LoadRateSeriesCsv(const std::string& path) {
  LineReader r;
  RETURN_IF_ERROR(r.Open(path, kRateSeriesFileLimit));
  std::string record, where;
  Status read;
  if (!NextCsvRecord(r, record, where, read)) {
    RETURN_IF_ERROR(read);
    return Status::Error(path + ":1: empty file (no header line)");
  }
  ASSIGN_OR_RETURN(const auto cols, FindColumns(record, {"t_s", "rate_per_s"}, where));
  std::vector<RatePoint> points;
  std::vector<std::string> f;
  while (NextCsvRecord(r, record, where, read)) {
    RETURN_IF_ERROR(SplitCsv(record, f, where));
    if (cols[0] >= f.size()) return FieldError(where, "t_s", "missing value");
    if (cols[1] >= f.size()) return FieldError(where, "rate_per_s", "missing value");
    RatePoint pt;
    ASSIGN_OR_RETURN(pt.t_s, ParseNumber(f[cols[0]], "t_s", where));
    ASSIGN_OR_RETURN(pt.rate_per_s, ParseNumber(f[cols[1]], "rate_per_s", where));
    if (pt.rate_per_s < 0) return FieldError(where, "rate_per_s", "must be >= 0");
    if (!points.empty() && !(pt.t_s > points.back().t_s)) {
      return FieldError(where, "t_s", "time goes backwards (must increase)");
    }
    points.push_back(pt);
  }
  RETURN_IF_ERROR(read);
  if (points.size() < 2) return Status::Error(path + ": needs at least two rows");
  return points;
}

}  // namespace aiscale::sim::traces
