// Drains a trace source the way the simulator does (Open, then Next in batches), so a harness
// exercises every row of its input. Bounded: a source may describe more requests than its
// bytes (a rate series), and the harness must finish quickly.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/traces/trace_request.h"

namespace aiscale::fuzz {

inline void DrainTrace(const sim::traces::RequestSource& source, size_t max_requests = 100000) {
  auto stream = source.Open();
  if (!stream.ok()) return;
  std::vector<sim::traces::TraceRequest> batch;
  size_t total = 0;
  while (total < max_requests) {
    batch.clear();
    if (!(*stream)->Next(batch, 4096).ok() || batch.empty()) return;
    total += batch.size();
  }
}

}  // namespace aiscale::fuzz
