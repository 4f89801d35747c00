// Alibaba cluster-trace-v2026-GenAI lora_request_trace.csv(.gz) (../shared/traces/
// alibaba_genai_v2026): Stable-Diffusion/LoRA requests, gmt_create at 1 s resolution.
//
// A diffusion request has no tokens; it is mapped onto TraceRequest as
//   input_tokens  = prompt_length (characters),
//   output_tokens = num_images_per_prompt x num_inference_steps (denoising steps: the work),
// so a plain model server can charge service time per step. The real file has 25 rows with
// those fields empty; empty means the trace's defaults (prompt 0, 1 image, 30 steps, the
// median). A non-empty unparsable value is an error.
#pragma once

#include <memory>
#include <string>

#include "sim/traces/trace_request.h"

namespace aiscale::sim::traces {

std::unique_ptr<RequestSource> AlibabaGenAiTrace(std::string path);

}  // namespace aiscale::sim::traces
