// A sweep's frontiers (report/frontier.h) as text for `aiscale simulate --sweep`: one line per
// run (knob value, GPU-hours, SLO attainment, '*' on its policy's frontier), then which
// policy's frontier dominates which, naming the points that are not matched.
#pragma once

#include <ostream>

#include "report/frontier.h"

namespace aiscale::cli {

void PrintSweep(const report::Sweep& s, std::ostream& os);

}  // namespace aiscale::cli
