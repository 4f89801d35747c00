// UTF-8 checks for text read from files: names, labels and keys that later land in a JSON
// report (nlohmann::json throws on invalid UTF-8 when it writes) or in an error message.
//
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace aiscale {

// True when `s` is well-formed UTF-8 (no overlongs, surrogates, truncated sequences or code
// points past U+10FFFF).
bool IsValidUtf8(std::string_view s);

// `s` with every byte that is not part of a well-formed sequence replaced by '?', so it can
// be echoed in an error message or a JSON document.
std::string ToValidUtf8(std::string_view s);

}  // namespace aiscale
