// libFuzzer harness: sim::ParseScenario over arbitrary text, as `aiscale simulate` reads a
// Scenario file (parsing builds every workload and policy once, so that is exercised too).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "sim/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto scenario = aiscale::sim::ParseScenario(aiscale::fuzz::AsString(data, size), "fuzz.yaml");
  (void)scenario;
  return 0;
}
