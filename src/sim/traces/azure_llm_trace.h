// Azure LLM inference trace 2023 (Splitwise; ../shared/traces/azure_llm_2023): CSV with
// TIMESTAMP (YYYY-MM-DD HH:MM:SS.fffffff), ContextTokens, GeneratedTokens, one row per
// request, in time order. Columns are found by name, so their order does not matter.
#pragma once

#include <memory>
#include <string>

#include "sim/traces/trace_request.h"

namespace aiscale::sim::traces {

std::unique_ptr<RequestSource> AzureLlmTrace(std::string path);

}  // namespace aiscale::sim::traces
