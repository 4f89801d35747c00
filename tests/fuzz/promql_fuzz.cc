// libFuzzer harness: monitor::ParsePromQueryResponse over arbitrary bodies, with the HTTP
// status taken from the first byte (200, 400, 422, 503) so error envelopes are reached too.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "monitor/promql_response.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiscale::monitor;
  static constexpr int kStatuses[] = {200, 400, 422, 503};
  int http_status = 200;
  if (size > 0 && data[0] < 8) {  // a leading control byte picks the status
    http_status = kStatuses[data[0] % 4];
    ++data;
    --size;
  }
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto r = ParsePromQueryResponse(body, http_status);
  if (r.ok()) {
    for (const auto& s : r->series) (void)s.Label("__name__");
  }
  return 0;
}
