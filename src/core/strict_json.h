// ParseStrictJson: nlohmann::json parsing that refuses what the plain parser silently accepts:
// a key repeated in one object (the plain parser keeps the last value) and nesting deeper than
// a limit (a hostile document of 100k '[' must fail fast, not exhaust the stack of whatever
// walks the result recursively later).
//
// Why: conformance vectors and Mooncake trace lines are JSON written by people and scripts; a
// duplicated key is a mistake that must be reported, naming the key and the object's path.
// Never throws. Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace aiscale {

// Deeper than any real document aiscale reads (conformance vectors nest about 5 levels).
inline constexpr size_t kMaxJsonDepth = 64;

// Errors (code kInvalid): "not valid JSON: <parser message>", "duplicate key 'K' in the
// object at PATH", "nested deeper than N levels at PATH". PATH is like cases[3].metric
// ("top level" for the root).
Result<nlohmann::json> ParseStrictJson(std::string_view text, size_t max_depth = kMaxJsonDepth);

}  // namespace aiscale
