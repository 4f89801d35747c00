// The `trace` block of an inference scenario: which loader, which file (relative paths are
// resolved against the scenario file's directory), and the window / compression / rate
// multiplier applied on top (trace_transform.h).
//
//   trace:
//     format: azure_llm          # azure_llm | mooncake | alibaba_genai | rate_series
//     path: ../../shared/traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv
//     rate_multiplier: 4         # (0, 1000]
//     time_compression: 1        # [1e-3, 1e6]
//     start_s: 0                 # [0, 1e9]
//     duration_s: 0              # [0, 1e9], 0 = whole trace
//     jitter_s: 60               # (0, 86400]
//     seed: 1
//   rate_series only: points: [[t_s, rate_per_s], ...] or path to a t_s,rate_per_s CSV,
//                     input_tokens, output_tokens.
#pragma once

#include <memory>
#include <string>

#include "core/config/config_node.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::traces {

// Errors are recorded in node.errors() (file:line:column + field path); on any error the
// result is null. The trace file must exist and be readable.
std::unique_ptr<RequestSource> ParseTraceSpec(const config::ConfigNode& node,
                                              const std::string& base_dir);

// `path` if absolute, else base_dir/path.
std::string ResolvePath(const std::string& base_dir, const std::string& path);

}  // namespace aiscale::sim::traces
