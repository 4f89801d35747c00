// The dashboard's frame, its style sheet and script, and its query parameters.
#include <algorithm>
#include <charconv>

#include "server/dashboard.h"
#include "server/html.h"

namespace aiscale::server {
namespace {

constexpr size_t kMaxParamLength = 16;

constexpr std::string_view kStyle = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fafbfc}
header{display:flex;gap:1em;align-items:baseline;padding:.6em 1em;background:#24292f;color:#fff}
header a{color:#fff}header .live{margin-left:auto;font-size:12px;opacity:.8}
header .live.stale{color:#ffb4a9;opacity:1}
main{padding:1em}table{border-collapse:collapse;background:#fff}
th,td{border-bottom:1px solid #d0d7de;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f2f4;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.sig{display:inline-block;margin-right:.6em;white-space:nowrap}
.sig::before{content:"";display:inline-block;width:.6em;height:.6em;border-radius:50%;margin-right:.25em}
.sig.ok::before{background:#2da44e}.sig.stale::before{background:#d4a72c}
.sig.missing::before,.sig.invalid::before,.sig.fetch_failed::before{background:#cf222e}
.badge{padding:0 .4em;border-radius:.6em;font-size:12px;background:#eaeef2}
.badge.paused,.badge.pinned{background:#ffd8b5}.badge.False{background:#ffebe9}
.spark path{fill:none;stroke-width:1.5}.spark .desired{stroke:#0969da}
.spark .ready{stroke:#2da44e;stroke-dasharray:2 2}
figure.chart{margin:0 0 1em;background:#fff;border:1px solid #d0d7de;padding:.3em}
figure.chart svg{width:100%;max-width:900px;display:block}
.legend .key{margin-left:.8em;font-size:12px}.legend .key::before{content:"\25A0 "}
svg .grid{stroke:#eaeef2}svg text{font-size:10px;fill:#57606a}svg .ylabel{text-anchor:end}
svg .xlabel{text-anchor:middle}svg .series{fill:none;stroke-width:1.6}
.desired{stroke:#0969da;color:#0969da}.current{stroke:#8250df;color:#8250df}
.ready{stroke:#2da44e;color:#2da44e}.value{stroke:#0969da;color:#0969da}
.forecast{stroke:#bf3989;color:#bf3989}.demand{stroke:#0969da;color:#0969da}
.band.forecast{fill:#bf398933;stroke:none}.ref{stroke-dasharray:4 3;stroke:#cf222e}
.ref.bound{stroke:#8c959f}.span.load{fill:#fff8c5}.span.eval{fill:#ddf4ff}
.curve{stroke:#bf3989;fill:none}.observed{fill:#0969da}
.log td{font-size:12px}.log .rule{font-family:monospace}
)css";

constexpr std::string_view kScript =
    R"js(// aiscale dashboard: refreshes <main> from the same URL (?part=main) every few seconds.
(function () {
  'use strict';
  var main = document.getElementById('main');
  var live = document.getElementById('live');
  if (!main || !window.fetch) return;
  var every = (parseInt(main.getAttribute('data-refresh'), 10) || 5) * 1000;
  function url() {
    var q = new URLSearchParams(window.location.search);
    q.set('part', 'main');
    return window.location.pathname + '?' + q.toString();
  }
  function refresh() {
    fetch(url(), {cache: 'no-store'}).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.text();
    }).then(function (html) {
      main.innerHTML = html;
      live.textContent = 'updated ' + new Date().toLocaleTimeString();
      live.className = 'live';
    }).catch(function (e) {
      live.textContent = 'not updating: ' + e.message;
      live.className = 'live stale';
    });
  }
  window.setInterval(refresh, every);
})();
)js";

Result<double> ParseNumber(const std::string& name, const std::string& text, double lo, double hi) {
  double v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (text.empty() || text.size() > kMaxParamLength || ec != std::errc() || p != e || v < lo ||
      v > hi) {
    std::string shown = text.substr(0, kMaxParamLength);
    return Status::Invalid("invalid query parameter " + name + "='" + shown +
                           "': must be a number in " + ShortNumber(lo) + ".." + ShortNumber(hi));
  }
  return v;
}

}  // namespace

Result<PageParams> ParsePageParams(const std::multimap<std::string, std::string>& params) {
  PageParams p;
  for (const auto& [k, v] : params) {
    if (k == "part") {
      if (v != "main")
        return Status::Invalid("invalid query parameter part: only part=main exists");
      p.fragment = true;
    } else if (k == "hours") {
      ASSIGN_OR_RETURN(p.hours, ParseNumber("hours", v, 0.25, 24));
    } else if (k == "log") {
      ASSIGN_OR_RETURN(double n, ParseNumber("log", v, 1, 1000));
      p.log_rows = static_cast<size_t>(n);
    } else {
      std::string shown = k.substr(0, 32);
      return Status::Invalid("unknown query parameter '" + shown + "' (known: part, hours, log)");
    }
  }
  return p;
}

std::string PageFrame(std::string_view title, std::string_view crumbs, std::string_view main) {
  std::string out;
  out.reserve(main.size() + kStyle.size() + 1024);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<link rel=\"icon\" href=\"data:,\"><title>";
  AppendEscaped(out, title);
  out += " - aiscale</title><style>";
  out += kStyle;
  out +=
      "</style><script src=\"/static/dashboard.js\" defer></script></head><body><header>"
      "<strong><a href=\"/\">aiscale</a></strong>";
  out += crumbs;  // already HTML
  out +=
      "<span id=\"live\" class=\"live\">live: refreshes every 5 s</span></header>"
      "<main id=\"main\" data-refresh=\"5\">";
  out += main;
  out += "</main></body></html>\n";
  return out;
}

Reply StaticAsset(std::string_view name) {
  if (name == "dashboard.js") {
    return Reply{200, std::string(kScript), "text/javascript; charset=utf-8"};
  }
  return ErrorReply(404, "no such asset (the dashboard serves /static/dashboard.js only)");
}

}  // namespace aiscale::server
