// SweepSection: report.html's part for `aiscale simulate --sweep`: each policy's cost/SLO
// frontier on one chart (GPU-hours along x, the share of requests that missed the SLO on a log
// y, every run a dot, each frontier a line), a table of every point, and which policy's
// frontier dominates which. Pure string building; names are escaped.
#pragma once

#include <string>

#include "report/frontier.h"

namespace aiscale::report {

std::string SweepSection(const Sweep& s);

}  // namespace aiscale::report
