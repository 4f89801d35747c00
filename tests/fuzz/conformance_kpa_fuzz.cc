// libFuzzer harness: cli::EvaluateKpaVectors over arbitrary JSON text (the KPA conformance
// vectors `aiscale conformance` reads).
#include <cstddef>
#include <cstdint>

#include "cli/conformance_kpa_eval.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto report = aiscale::cli::EvaluateKpaVectors(aiscale::fuzz::AsString(data, size), "fuzz");
  if (report.ok()) (void)report->Summary();
  return 0;
}
