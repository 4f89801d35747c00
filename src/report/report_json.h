// report.json: a Report written as JSON for machines (and for people with jq).
//
// Layout: {"scenario", "file", "seed", "duration_limit_s", "runs": [run...]}. A run entry has
// the run's figures at top level (the one workload's summary as is, or with several workloads
// their totals), then "policy" (the label), "policy_name", "baseline" ("static" or
// "static-peak", for those runs), "role" and "pool" (a shared-pool run's), "cut", "end_s",
// "rescales_per_hour", "workloads" (each workload's summary with "name" and, when judged,
// "vs_targets"), "timeline" (every workload's points; with several, each point names its
// "workload"), "decisions" ({total, kept, by_rule, by_action, changes}), "vs_static" and
// "vs_targets"; a shared-pool scenario adds "pool_comparison". A figure a workload kind does not
// have is absent (or null where every run entry has the key: gpu_hours, completion_time_s,
// mean_gpu_util, max_failure_replacement_s), never a 0 that was not measured. Write-only: nothing
// in aiscale reads it back.
#pragma once

#include <nlohmann/json.hpp>

#include "report/run_summary.h"

namespace aiscale::report {

nlohmann::json ToJson(const Report& r);
nlohmann::json ToJson(const RunSummary& r);
// A workload's summary fields (no name, timeline or verdict).
nlohmann::json ToJson(const WorkloadSummary& w);
nlohmann::json ToJson(const Verdict& v);
nlohmann::json ToJson(const BaselineVerdict& v);
// The finite fields of one point (integral values as integers).
nlohmann::json ToJson(const TimelinePoint& p);
nlohmann::json ToJson(const Sweep& s);

}  // namespace aiscale::report
