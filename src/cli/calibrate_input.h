// Where `aiscale calibrate` reads a run's decisions from: the SQLite store `aiscale run` wrote,
// or a JSON-lines decision log (one Decision per line, as the API and the recorded
// decisions.jsonl have them). Either way only the named workload's decisions, each with the
// wall time it was made at (a simulator's log has none: it is not a real run).
//
// Errors say which file and why: a store path that does not exist or is not a regular file is
// kNotFound (calibrate never creates one), a line of the log that is not a decision is
// kInvalid at file:line, a store or log without a decision of the workload is kNotFound.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "sim/calibrate.h"

namespace aiscale::cli {

struct RunDecisions {
  std::vector<sim::TickRecord> ticks;  // oldest first
  std::string source;                  // "store PATH" or "decision log PATH", for messages
};

Result<RunDecisions> ReadStoreDecisions(const std::string& path, const std::string& workload);
Result<RunDecisions> ReadDecisionLog(const std::string& path, const std::string& workload);

// Why no decision of `d` falls in the calibrated run: what the source holds against the run's
// window (calibrate.h kDecisionLeadS), for a "not this run's decisions" error.
std::string NoDecisionsInRun(const RunDecisions& d, const sim::Calibration& c,
                             const std::string& workload);

}  // namespace aiscale::cli
