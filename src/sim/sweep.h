// Sweep: a scenario's compare list expanded into a grid over each policy's main knob, so
// `aiscale simulate --sweep` draws every policy's cost/SLO frontier (report/frontier.h) from
// the same trace, seed and model, instead of one point per policy.
//
// The knobs (SweepKnobs): hpa and kpa their target (every metric's, as a factor of the
// configured value), predictive its target_utilization, slo its headroom prior. Entries of
// other policies (static-peak) stay one point each. The expanded scenario is the same file with
// `compare:` replaced and `targets:` dropped (a target names runs the sweep relabels); it is
// parsed as the original is, so a bad knob value is an error, never a silent default.
// Pure (no I/O): the caller loads the file and runs the plan.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/result.h"
#include "report/frontier.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace aiscale::sim {

struct SweepKnob {
  std::string policy;
  std::string knob;     // as the report names it
  bool factor = false;  // values multiply the configured value (else they replace it)
  std::vector<double> values;
};

const std::vector<SweepKnob>& SweepKnobs();

struct SweepPlan {
  Scenario scenario;     // the expanded scenario, ready to run
  report::Sweep layout;  // families and their points' labels and values, no figures yet
};

// Expands the scenario document `root` (read from `file`). Errors: more than one workload, no
// policy to sweep, or an expanded entry the scenario parser refuses (its message).
Result<SweepPlan> PlanSweep(const config::ConfigNode& root, const std::string& file);
// The layout with each point's figures from the run of its label, frontiers and dominance
// judged. A run missing from `r` leaves its point without figures (on no frontier).
report::Sweep CollectSweep(const report::Sweep& layout, const ScenarioResult& r);

}  // namespace aiscale::sim
