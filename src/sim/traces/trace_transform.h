// TransformedSource: a window, time compression and rate multiplier applied to another
// source's requests, in that order, deterministically (seeded).
//
//   window:      keep arrivals with start_s <= t < start_s + duration_s (original time);
//   compression: t' = (t - start_s) / time_compression (a day in 1/c of a day; rates x c);
//   multiplier:  k >= 1: each request is replayed floor(k) times, plus once more with
//                probability frac(k). The original keeps its time; each extra copy is placed
//                uniformly at random in [t, t + min(gap to the next request, jitter_s)], so
//                copies never pass the next original and the stream stays in time order with
//                one request of lookahead. The per-minute shape (burstiness, peak-to-mean) is
//                kept; only the level scales. k < 1: independent thinning, kept with
//                probability k. Copies keep the original's token counts.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/traces/trace_request.h"

namespace aiscale::sim::traces {

struct TransformOptions {
  double start_s = 0;
  double duration_s = 0;        // 0 = to the end
  double time_compression = 1;  // > 0
  double rate_multiplier = 1;   // > 0
  double jitter_s = 60;         // > 0: the most an extra copy is moved
  uint64_t seed = 1;
  bool IsIdentity() const {
    return start_s == 0 && duration_s == 0 && time_compression == 1 && rate_multiplier == 1;
  }
};

// Takes ownership of `inner`.
std::unique_ptr<RequestSource> Transformed(std::unique_ptr<RequestSource> inner,
                                           TransformOptions options);

}  // namespace aiscale::sim::traces
