// libFuzzer harness: monitor::ParseExposition over arbitrary bytes in both formats; a parsed
// exposition is walked (every family, sample and label view read, every family looked up by
// name) so that a view pointing outside the kept body is caught by ASan.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_input.h"
#include "monitor/exposition_parser.h"

namespace {

size_t Walk(const aiscale::monitor::Exposition& e) {
  size_t bytes = 0;
  for (const auto& f : e.families()) {
    bytes += f.name.size() + f.help.size() + f.unit.size();
    for (const auto& s : e.SamplesOf(f)) {
      bytes += s.name.size();
      for (const auto& l : e.Labels(s)) bytes += l.name.size() + l.value.size();
      bytes += e.Label(s, "le").size();
    }
    bytes += e.FindFamilies(f.name).size();
  }
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiscale::monitor;
  for (auto format : {ExpositionFormat::kPrometheusText, ExpositionFormat::kOpenMetrics}) {
    auto e = ParseExposition(aiscale::fuzz::AsString(data, size), format);
    if (e.ok()) {
      volatile size_t sink = Walk(*e);
      (void)sink;
    }
  }
  return 0;
}
