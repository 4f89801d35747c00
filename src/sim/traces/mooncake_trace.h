// Mooncake FAST'25 conversation trace (../shared/traces/mooncake_fast25): JSON lines with
// timestamp (ms from trace start), input_length and output_length (tokens); hash_ids (prefix
// cache blocks) are ignored because the replica model has no prefix cache.
#pragma once

#include <memory>
#include <string>

#include "sim/traces/trace_request.h"

namespace aiscale::sim::traces {

std::unique_ptr<RequestSource> MooncakeTrace(std::string path);

}  // namespace aiscale::sim::traces
