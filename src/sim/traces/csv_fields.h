// Helpers shared by the CSV trace loaders: header column lookup, field splitting and strict
// number / timestamp parsing, each failing with "FILE:LINE: field NAME: what" so a malformed
// row is easy to find.
//
// Why: every loader must reject missing columns, unparsable numbers and backwards time the
// same way, and none may crash on bad input. Fields are split on ',' (the traces have no
// quoted fields); views point into the caller's line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace aiscale::sim::traces {

// Splits `line` on ',' into `out` (cleared first).
void SplitCsv(std::string_view line, std::vector<std::string_view>& out);

// Column indexes of `wanted` in a header line; error names the first missing column.
Result<std::vector<size_t>> FindColumns(std::string_view header,
                                        const std::vector<std::string>& wanted,
                                        const std::string& where);

// "WHERE: field NAME: MESSAGE"
Status FieldError(const std::string& where, std::string_view field, const std::string& message);

// Strict parse of a finite decimal number (no trailing junk).
Result<double> ParseNumber(std::string_view text, std::string_view field, const std::string& where);
// A non-negative count that fits in 32 bits (fractional ".0" accepted: "30.0").
Result<uint32_t> ParseCount(std::string_view text, std::string_view field,
                            const std::string& where);
// "YYYY-MM-DD HH:MM:SS[.fraction]" (no time zone) as nanoseconds since 1970-01-01.
Result<int64_t> ParseDateTimeNs(std::string_view text, std::string_view field,
                                const std::string& where);

// Checks `t` >= `previous` (time order); error names both times in seconds.
Status CheckMonotonic(int64_t t, int64_t previous, std::string_view field,
                      const std::string& where);

}  // namespace aiscale::sim::traces
