// Evaluation of KPA conformance vectors (shared/conformance/README.md, kpa_*.json) against
// the real decision code in decide/policies/kpa_algorithm.h.
//
// Mapping (see the `note` of kpa_knative.json): `samples` are per-second totals, secondsAgo
// 0 being the current second; the stable and panic averages are Knative's bucket window
// averages over them; `panicSinceSecondsAgo` (null = not in panic) and `maxPanicPods` are the
// autoscaler's state before the Scale() call; `readyPods` is the ready count (0 counts as 1).
// `totalValue` only feeds Knative's excess burst capacity and is not checked.
//
// Extensions read from aiscale's own vector files (ignored fields elsewhere): a case with the
// key `lastNonZeroSecondsAgo` also runs the scale-to-zero grace period (null: never non-zero
// since the autoscaler started now, or at all when allowZeroInitialScale), with the current
// scale `currentPods` (default readyPods).
//
// A malformed file (not JSON, wrong kind, a missing or mistyped field) is an error naming
// the file, case and field. A case whose inputs the algorithm cannot represent is a failed
// case, not an error.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace aiscale::cli {

struct KpaCaseOutcome {
  std::string name;
  bool passed = false;
  std::string line;  // "PASS name" or "FAIL name: expected X got Y"
};

struct KpaConformanceReport {
  std::vector<KpaCaseOutcome> cases;
  int passed = 0;
  int failed = 0;
  std::string Summary() const;  // "N passed, N failed"
};

Result<KpaConformanceReport> EvaluateKpaVectors(const std::string& json_text,
                                                const std::string& file);
Result<KpaConformanceReport> EvaluateKpaVectorFile(const std::string& path);

}  // namespace aiscale::cli
