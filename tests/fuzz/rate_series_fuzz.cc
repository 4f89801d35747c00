// libFuzzer harness: sim::traces::LoadRateSeriesCsv over arbitrary bytes; a series that loads
// is built into a RateSeries source and a bounded number of its requests drawn.
#include <cstddef>
#include <cstdint>
#include <utility>

#include "fuzz/fuzz_input.h"
#include "fuzz/trace_drain.h"
#include "sim/traces/rate_series.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiscale::sim::traces;
  static aiscale::fuzz::MemFile file;
  auto points = LoadRateSeriesCsv(file.Write(data, size));
  if (!points.ok()) return 0;
  RateSeriesOptions options;
  options.points = std::move(points).value();
  auto source = RateSeries(std::move(options));
  if (source.ok()) aiscale::fuzz::DrainTrace(**source, 20000);
  return 0;
}
