#include <iostream>

#include "cli/commands.h"
#include "cli/conformance_hpa_eval.h"

namespace aiscale::cli {

// Exit codes: 0 every case passed, 1 some case failed, 2 the file could not be evaluated.
int ConformanceHpa(const std::string& file) {
  auto report = EvaluateHpaVectorsFile(file);
  if (!report.ok()) {
    std::cerr << "aiscale conformance hpa: " << report.status().message() << "\n";
    return 2;
  }
  for (const HpaCaseOutcome& c : report->cases) std::cout << c.Line() << "\n";
  std::cout << report->Summary() << "\n";
  return report->failed == 0 ? 0 : 1;
}

}  // namespace aiscale::cli
