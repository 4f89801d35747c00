// libFuzzer harness: config::ParseConfig then cli::ParseControllerConfig over arbitrary text,
// as `aiscale run` and `aiscale validate` read a ControllerConfig file.
#include <cstddef>
#include <cstdint>

#include "cli/controller_config.h"
#include "core/config/config_node.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiscale;
  config::ConfigErrors errors;
  auto root = config::ParseConfig(fuzz::AsString(data, size), "fuzz.yaml", errors);
  auto cfg = cli::ParseControllerConfig(root);
  (void)cfg;
  return 0;
}
