// Number and text formatting shared by the report's text and HTML output.
#pragma once

#include <string>
#include <string_view>

namespace aiscale::report {

// printf-style "%.<decimals>f" of v; "" for NaN.
std::string FormatFixed(double v, int decimals);
// v with up to `decimals` decimals and no trailing zeros: 2 -> "2", 0.25 -> "0.25".
std::string FormatShort(double v, int decimals = 3);
// `s` with & < > " ' replaced by entities, for HTML text and attribute values.
std::string EscapeHtml(std::string_view s);

}  // namespace aiscale::report
