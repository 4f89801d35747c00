// Report: report.json (machine-readable) and the per-run decision logs of a ScenarioResult.
//
// report.json: {"scenario", "file", "seed", "duration_limit_s", "runs": [{"policy",
// "gpu_hours", "completion_time_s", "mean_gpu_util" (0-1, over allocated GPUs, time-weighted),
// "rescales", "max_failure_replacement_s", "cut", "timeline": [...], "workloads": [...],
// "decisions": {...}}, ...]}. A run entry is generic: a single workload's Summary() is merged
// into it as is (so other kinds add their own fields); with several workloads the figures above
// are aggregated (sums; max for times; GPU-hour-weighted mean utilization).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "sim/report_files.h"
#include "sim/runner.h"

namespace aiscale::sim {

nlohmann::json RunEntry(const RunResult& r);
nlohmann::json ReportJson(const ScenarioResult& r);
// One ToJson(Decision) per line, in tick order: the golden-file format.
std::string DecisionLogJsonl(const RunResult& r);

struct WrittenReport {
  std::string json_path;
  std::string html_path;
  std::vector<std::string> decision_logs;
};
// Writes report.json, report.html and decisions-<policy>.jsonl into `dir` (created if needed),
// each atomically, with `dir` locked (by `held` when the caller locked it for the whole run,
// else here) and the previous run's leftovers removed (sim/report_files.h). Fails before
// writing anything when two runs' labels map to one decision-log file.
Result<WrittenReport> WriteReport(const ScenarioResult& r, const std::string& dir,
                                  const OutputLock* held = nullptr);

}  // namespace aiscale::sim
