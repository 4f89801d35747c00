// Window arithmetic over cumulative series: PromQL's histogram_quantile over the increase of a
// classic histogram's buckets, and a counter's increase with reset handling.
//
// Why here: a scrape source reads cumulative counters and buckets straight from an endpoint,
// with no Prometheus in between, so it does what `histogram_quantile(0.99, rate(x_bucket[w]))`
// and `rate(x_total[w])` would: difference the cumulative values over the window, then
// interpolate. Pure functions; NaN means "no value" (no observations, no +Inf bucket), never 0.
#pragma once

#include <span>
#include <vector>

namespace aiscale::monitor {

struct Bucket {
  double upper_bound = 0;  // the `le` label; +Inf for the last bucket
  double count = 0;        // cumulative: observations <= upper_bound
};

// The q-quantile of the distribution the buckets describe, as PromQL's bucketQuantile does it:
// buckets sorted by upper bound, equal bounds merged, tiny float errors smoothed and counts made
// monotonic (the "envelope"); linear interpolation inside the bucket the rank falls in, from 0
// (or the lower neighbour's bound) to its upper bound; a rank in the +Inf bucket yields the
// second-highest bound; a lowest bucket bound <= 0 is returned as is. NaN when q is NaN, when
// there is no +Inf bucket, fewer than two buckets, or no observations; -Inf/+Inf for q < 0 / > 1.
double HistogramQuantile(double q, std::vector<Bucket> buckets);

// How much a counter grew over consecutive readings `values` (oldest first), Prometheus-style:
// a decrease means the counter was reset (a restart), and the new reading itself is the
// increase since the reset. NaN readings are skipped. Fewer than two readings: NaN.
double CounterIncrease(std::span<const double> values);

}  // namespace aiscale::monitor
