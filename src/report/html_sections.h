// report.html's sections for one workload across the runs that ran it: a serving section
// (InferenceService) and a training section (TrainingJob and any other kind). Internal to the
// report layer (report/report_html.h assembles the page).
#pragma once

#include <string>

#include "report/comparison.h"
#include "report/html_parts.h"

namespace aiscale::report::html {

// The table, verdicts, a legend whose entries toggle series, demand, replicas overlaid (ready
// wide and pale, desired dashed on top, the oracle's plan grey), replicas per run each on its
// own scale with a marker and reason per rescale, and p99 latency and TTFT (log scale) with the
// SLO bound.
std::string ServingSection(const ComparisonTable& table, const RunViews& runs, bool with_static);

// The table, verdicts, the phase legend, and per run on its own scale: nodes (desired over
// ready, the oracle's plan grey, failures and rescales with their reasons), GPU utilization
// and samples/s, with phases shaded.
std::string TrainingSection(const ComparisonTable& table, const RunViews& runs, bool with_static);

}  // namespace aiscale::report::html
