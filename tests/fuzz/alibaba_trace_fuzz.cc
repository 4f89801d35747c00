// libFuzzer harness: sim::traces::AlibabaGenAiTrace over arbitrary bytes (plain or gzip), every row
// read.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "fuzz/trace_drain.h"
#include "sim/traces/alibaba_genai_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static aiscale::fuzz::MemFile file;
  auto source = aiscale::sim::traces::AlibabaGenAiTrace(file.Write(data, size));
  aiscale::fuzz::DrainTrace(*source);
  return 0;
}
