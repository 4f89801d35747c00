// Small text helpers for the dashboard's HTML and the CLI's tables: escaping, numbers, ages.
//
// Why apart: every piece of text that came from outside (a workload name, a reason, a signal's
// detail from an exporter) goes through EscapeHtml before it reaches a page, and one function
// makes that checkable. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace aiscale::server {

// `s` with & < > " ' replaced by entities: safe in HTML text and in quoted attribute values.
std::string EscapeHtml(std::string_view s);
// Appends EscapeHtml(s) to `out` without a temporary.
void AppendEscaped(std::string& out, std::string_view s);
// A value with up to 3 significant decimals and no trailing zeros ("1.5", "30", "0.125");
// "-" for NaN or infinity.
std::string ShortNumber(double v);
// An age as kubectl prints it: "42s", "5m", "3h", "2d"; "-" when negative (unknown).
std::string AgeText(double seconds);
// A URL path segment: RFC 3986 unreserved characters pass, every other byte is %XX.
std::string UrlEncode(std::string_view s);

}  // namespace aiscale::server
