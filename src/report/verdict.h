// Verdict: how one workload of one run measured against the scenario's targets
// (report/targets.h), and BaselineVerdict: whether a run beat the static baseline.
//
// Why typed: report.html, the CLI notes and report.json all show the same judgement; each
// target says what was measured, what it had to be, whether it was met, and whether it was
// required at all (a seed figure the oracle itself cannot reach is listed, not required).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace aiscale::report {

struct TargetResult {
  std::string name;  // e.g. "gpu_hours_over_oracle"
  double measured = 0;
  double target = 0;
  bool met = false;
  std::optional<bool> required;  // set by targets that can be waived; unset: always required
  std::optional<double> oracle;  // the oracle's own figure, where the target compares to it
  bool Required() const { return required.value_or(true); }
};

struct Verdict {
  std::vector<TargetResult> targets;
  bool met_all = true;  // every required target met
  std::string why_not;  // each required target missed, and by how much; empty when met_all
  std::string oracle_note;
};

// Against the `static` run: cheaper by at least 1% without being more than 10% slower.
struct BaselineVerdict {
  double gpu_hours_ratio = 0;
  double completion_ratio = 0;
  bool beats = false;
  std::string why_not;  // empty when beats
};

}  // namespace aiscale::report
