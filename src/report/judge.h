// Judge: fills a Report's verdicts: each workload of each run against the scenario's targets
// (training and serving verdicts), and each run against the static baseline (vs_static).
//
// Baselines are found by RunSummary::baseline, never by label. The baselines themselves are
// not judged: static is not measured against itself, static-peak is a bound to beat.
#pragma once

#include "report/run_summary.h"
#include "report/targets.h"

namespace aiscale::report {

void Judge(Report& r, const Targets& t);

// Whether `run` beat `st` on GPU-hours (below 0.99x) without losing more than 10% speed, and
// if not, what held it back (its rescales and its most frequent decision rules).
BaselineVerdict CompareToStatic(const RunSummary& run, const RunSummary& st);

}  // namespace aiscale::report
