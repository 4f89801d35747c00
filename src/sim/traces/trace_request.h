// TraceRequest and RequestStream: one inference request as replayed by the simulator, and a
// pull-based stream of them.
//
// Why: traces are streamed, never held whole (10 M requests would not fit comfortably), and a
// request is 16 bytes so the few places that must buffer (the oracle's interval) stay small.
// Promises: a stream yields arrivals in non-decreasing time order, starting at the trace's
// first request (t = 0 after normalisation); errors name file, line and field. A stream is
// deterministic: opening the same spec twice yields the same requests. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace aiscale::sim::traces {

struct TraceRequest {
  int64_t arrival_ns = 0;      // since the start of the replay
  uint32_t input_tokens = 0;   // prompt / context (for non-LLM traces: the trace's input size)
  uint32_t output_tokens = 0;  // generated tokens (for non-LLM traces: work units, >= 1)
};
static_assert(sizeof(TraceRequest) == 16, "TraceRequest must stay compact");

class RequestStream {
 public:
  virtual ~RequestStream() = default;
  // Appends up to `max` requests to `out` (which it does not clear). Appending nothing means
  // the stream is exhausted. An error stops the stream for good.
  virtual Status Next(std::vector<TraceRequest>& out, size_t max) = 0;
};

// Opens a fresh stream over the same requests every time (one per policy run, the oracle's
// pass, the peak-minute pass).
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  virtual Result<std::unique_ptr<RequestStream>> Open() const = 0;
  // One line for reports: which file, what transform.
  virtual std::string Describe() const = 0;
};

// A source over requests already in memory (tests, benchmarks, synthetic load); they must be
// in time order.
std::unique_ptr<RequestSource> VectorSource(std::vector<TraceRequest> requests,
                                            std::string description = "in-memory requests");

// Reads a whole stream (tests and small traces only).
Result<std::vector<TraceRequest>> ReadAll(RequestStream& s);

}  // namespace aiscale::sim::traces
