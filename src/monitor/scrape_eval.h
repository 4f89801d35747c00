// ScrapeEval: turns a target's recent scrapes into values: gauges as read, counters as
// per-second rates, histograms as a quantile of the observations made in the window, and the
// presets' composite signals (used fraction, phase).
//
// Why apart from ScrapeSource: this is the arithmetic (pure, table-tested without HTTP); the
// source only fetches, caches and names instances. `history` is oldest first and its last
// element is the current scrape; rates and quantiles compare it with the older ones (PromQL's
// rate/increase over the window, resets handled), so with one scrape they have no value yet:
// the result is empty (missing data), never 0. A metric absent from the current scrape is
// kNotFound; a histogram bucket with a malformed `le` is kInvalid.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "monitor/exposition_parser.h"
#include "monitor/presets.h"
#include "monitor/selector.h"

namespace aiscale::monitor {

struct Scrape {
  TimePoint at;  // when it was fetched (the query's now)
  std::shared_ptr<const Exposition> exposition;
};

struct SeriesPoint {
  std::vector<std::pair<std::string, std::string>> labels;  // without `le`; empty if aggregated
  double value = 0;  // NaN passes through (e.g. a quantile over a window with no requests)
  TimePoint at;      // the sample's own timestamp if it had one, else the scrape's
};

// `cancelled` (empty: never) is asked every few thousand samples; when it says yes the result
// is kUnavailable (a stopping daemon does not wait out a huge target).
Result<std::vector<SeriesPoint>> EvaluateSelector(const Selector& sel,
                                                  std::span<const Scrape> history,
                                                  const std::function<bool()>& cancelled = {});

// A preset signal: the first of its metric names the current scrape has is evaluated.
Result<std::vector<SeriesPoint>> EvaluatePresetSignal(const PresetSignal& ps,
                                                      std::span<const Scrape> history,
                                                      const std::function<bool()>& cancelled = {});

}  // namespace aiscale::monitor
