// The stylesheet and the one script of report.html (and of any page that embeds SvgChart
// charts), inlined into the page so that it opens from disk with nothing fetched.
//
// The script is progressive: the page is complete without it (tables are HTML, charts are SVG,
// every series drawn). With it: hovering a chart shows every visible series' value at that time
// (read from the series' data-pts), clicking a legend entry ([data-toggle="policy:P"] or
// "kind:K") hides or shows the matching series in its section, and the decision log
// (input.logq, select.logrun) filters as one types and opens (details.logbox); a URL fragment
// "#q=TEXT" pre-fills the search. It builds text with textContent only (names from input files
// never become markup) and marks <html data-js="ready"> when set up, which tests read from the DOM.
#pragma once

#include <string_view>

namespace aiscale::report {

std::string_view PageStyle();
std::string_view PageScript();

}  // namespace aiscale::report
