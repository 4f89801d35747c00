// The live dashboard that `aiscale run` serves at /: an overview of every workload and a page
// per workload, as server-rendered HTML. Tables and charts are in the HTML itself (readable with
// JavaScript off); one small script, served from /static/dashboard.js, refreshes a page's
// <main> from the same URL with ?part=main so it updates without a reload. Nothing is fetched
// from anywhere but this server.
//
//   GET /                          overview (every workload, sparkline, signal freshness)
//   GET /workloads/{key}?hours=H&log=N   one workload: charts over the last H hours (1..24,
//                                  default 6), the newest N decisions (1..1000, default 100)
//   GET /static/dashboard.js       the refresh script (the only asset; any other path is 404)
//
// Contract: pure functions of (LiveView, Store, request parts, now) to a Reply; they never
// throw, never call a policy, and escape every text that came from a config, an engine or an
// exporter. Bad query parameters are a 400 naming the parameter. Thread-safe as far as
// LiveView and Store are.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/store.h"
#include "core/time.h"
#include "core/workload_view.h"
#include "server/api_handlers.h"

namespace aiscale::server {

inline constexpr const char* kHtmlType = "text/html; charset=utf-8";

struct PageParams {
  bool fragment = false;  // ?part=main: only the <main> element's contents
  double hours = 6;       // ?hours=: 1..24
  size_t log_rows = 100;  // ?log=: 1..1000
};

// kInvalid naming the parameter when a value is malformed, out of range or too long, or when
// a parameter is unknown.
Result<PageParams> ParsePageParams(const std::multimap<std::string, std::string>& params);

Reply OverviewPage(const LiveView& view, WallTime now, const PageParams& p);
Reply WorkloadPage(const LiveView& view, Store* store, const std::string& name, WallTime now,
                   const PageParams& p);
// /static/NAME: the script, or a 404 for any other name (no file system behind it).
Reply StaticAsset(std::string_view name);

// The shared page frame: doctype, <meta charset="utf-8">, style, script, header, <main>.
std::string PageFrame(std::string_view title, std::string_view crumbs, std::string_view main);

}  // namespace aiscale::server
