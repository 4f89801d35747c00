// Evaluation of HPA conformance vectors (schema: shared/conformance/README.md, hpa_*.json).
//
// Why: the vectors are the Kubernetes test tables kept as data; the command, the unit test and
// the integration script all run them through this one evaluator. A malformed file (bad JSON,
// missing or mistyped fields) is an error naming the file, the case and the field; a well-formed
// case whose inputs the implementation cannot represent (an unknown metric type, an invalid
// behavior) is a FAILED case, never a skipped one.
//
//   auto report = EvaluateHpaVectorsFile("hpa_kubernetes.json");
//   if (!report.ok()) { print(report.status()); return 2; }
//   for (auto& c : report->cases) print(c.Line());
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace aiscale::cli {

struct HpaCaseOutcome {
  std::string name;
  bool passed = false;
  std::string detail;  // on failure: "expected X got Y", or why the case could not be run
  // "PASS name" or "FAIL name: detail".
  std::string Line() const;
};

struct HpaVectorReport {
  std::vector<HpaCaseOutcome> cases;
  int passed = 0;
  int failed = 0;
  // "N passed, N failed".
  std::string Summary() const;
};

// `source_name` names the input in error messages.
Result<HpaVectorReport> EvaluateHpaVectors(const std::string& json_text,
                                           const std::string& source_name);
Result<HpaVectorReport> EvaluateHpaVectorsFile(const std::string& path);

}  // namespace aiscale::cli
