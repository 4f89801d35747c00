// Selector: which series of a scraped exposition a query means, and how to reduce them.
//
// Grammar of MetricQuery::expression for a scrape source (a small, PromQL-shaped subset):
//
//   expression := selector
//               | agg "(" selector ")"                        agg := sum | avg | max | min
//               | "histogram_quantile" "(" phi "," selector ")"
//               | "histogram_quantile" "(" phi "," agg "(" selector ")" ")"
//   selector   := metric_name [ "{" [ matcher { "," matcher } [ "," ] ] "}" ]
//   matcher    := label_name "=" '"' value '"'                 equality only; \" \\ \n escapes
//
// What a selector yields depends on the metric's TYPE: a gauge (or untyped, or summary) its
// values; a counter its per-second rate over the window; a histogram the phi-quantile (0.99
// unless histogram_quantile says otherwise) of the observations made in the window. `agg`
// reduces the matching series of one target (one replica) to one value (sum: histograms merged
// bucket by bucket first, like `sum by (le)`); without it each series is its own observation.
// Pure value type; parse errors are kInvalid with the offending position.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "monitor/exposition_parser.h"

namespace aiscale::monitor {

enum class Aggregation { kNone, kSum, kAvg, kMax, kMin };

struct Selector {
  std::string metric;
  std::vector<std::pair<std::string, std::string>> matchers;  // label == value
  Aggregation aggregation = Aggregation::kNone;
  double quantile = 0.99;

  // True when every matcher holds for `s` (an empty value matches an absent label).
  bool Matches(const Exposition& e, const Sample& s) const;
};

Result<Selector> ParseSelector(std::string_view expression);

}  // namespace aiscale::monitor
