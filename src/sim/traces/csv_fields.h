// Helpers shared by the CSV trace loaders: header column lookup, field splitting and strict
// number / timestamp parsing, each failing with "FILE:LINE: field NAME: what" so a malformed
// row is easy to find.
//
// Why: every loader must reject missing columns, unparsable numbers and backwards time the
// same way, and none may crash on bad input. Every CSV loader (azure, alibaba, rate series)
// splits records with the one RFC 4180 tokenizer here: a field in double quotes may hold
// commas, newlines and doubled quotes ("a ""b"""); a quote inside an unquoted field, text
// after a closing quote and a quote left open at the end of the file are errors, as is a
// header that names one column twice.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace aiscale::sim::traces {

class LineReader;

// Splits one CSV record (RFC 4180) into `out`, reusing its strings. Errors name `where`.
Status SplitCsv(std::string_view record, std::vector<std::string>& out, const std::string& where);
// True when `record` ends inside a quoted field (so the record continues on the next line).
bool CsvQuoteOpen(std::string_view record);
// Reads the next non-empty CSV record from `r` into `record` (lines of a quoted field joined
// with '\n'); `where` gets "FILE:LINE" of its first line. False at the end of the file or on
// an error, which `status` then holds (a quote still open at the end, a record past
// kMaxLineBytes, a read error).
bool NextCsvRecord(LineReader& r, std::string& record, std::string& where, Status& status);

// Column indexes of `wanted` in a header line; error names the first missing column, or a
// column named twice (both positions).
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
// "YYYY-MM-DD HH:MM:SS[.fraction]" (no time zone) as nanoseconds since 1970-01-01. A date
// that does not exist (Feb 30, Feb 29 of a common year, Apr 31, hour 24, minute 60) is an
// error, never rolled over; second 60 is accepted only as a leap second, at 23:59:60.
Result<int64_t> ParseDateTimeNs(std::string_view text, std::string_view field,
                                const std::string& where);

// Checks `t` >= `previous` (time order); error names both times in seconds.
Status CheckMonotonic(int64_t t, int64_t previous, std::string_view field,
                      const std::string& where);

}  // namespace aiscale::sim::traces
