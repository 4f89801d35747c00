#include "sim/traces/trace_request.h"

namespace aiscale::sim::traces {

Result<std::vector<TraceRequest>> ReadAll(RequestStream& s) {
  std::vector<TraceRequest> all;
  while (true) {
    const size_t before = all.size();
    RETURN_IF_ERROR(s.Next(all, 1 << 14));
    if (all.size() == before) return all;
  }
}

}  // namespace aiscale::sim::traces
