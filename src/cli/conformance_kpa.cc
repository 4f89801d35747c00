// `aiscale conformance kpa FILE`: one line per case, then `N passed, N failed`.
// Exit 0 when every case passed, 1 when any failed, 2 when the file is unreadable or malformed.
#include <iostream>

#include "cli/commands.h"
#include "cli/conformance_kpa_eval.h"

namespace aiscale::cli {

int ConformanceKpa(const std::string& file) {
  Result<KpaConformanceReport> r = EvaluateKpaVectorFile(file);
  if (!r.ok()) {
    std::cerr << "aiscale: " << r.status().message() << "\n";
    return 2;
  }
  for (const KpaCaseOutcome& c : r->cases) std::cout << c.line << "\n";
  std::cout << r->Summary() << "\n";
  return r->failed == 0 ? 0 : 1;
}

}  // namespace aiscale::cli
