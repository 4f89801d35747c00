#include "sim/report_html.h"

namespace aiscale::sim {
namespace {

// Only what the charts draw; the full data stays in report.json.
nlohmann::json ChartData(const nlohmann::json& report) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : report.value("runs", nlohmann::json::array())) {
    nlohmann::json tl = nlohmann::json::array();
    for (const auto& p : run.value("timeline", nlohmann::json::array())) {
      nlohmann::json q = nlohmann::json::object();
      for (const char* k : {"t_s", "desired", "ready", "phase", "restarting", "samples_per_s",
                            "gpu_util", "gpu_hours"}) {
        if (p.contains(k)) q[k] = p[k];
      }
      tl.push_back(q);
    }
    nlohmann::json failures = nlohmann::json::array();
    nlohmann::json rescales = nlohmann::json::array();
    for (const auto& w : run.value("workloads", nlohmann::json::array())) {
      for (const auto& f : w.value("failure_events", nlohmann::json::array()))
        failures.push_back(f);
      for (const auto& r : w.value("rescale_events", nlohmann::json::array()))
        rescales.push_back(r);
    }
    nlohmann::json summary = nlohmann::json::object();
    for (const auto& [k, v] : run.items()) {
      if (v.is_number() || v.is_boolean() || v.is_string()) summary[k] = v;
    }
    runs.push_back({{"policy", run.value("policy", "")},
                    {"summary", summary},
                    {"timeline", tl},
                    {"failures", failures},
                    {"rescales", rescales}});
  }
  return {{"scenario", report.value("scenario", "")}, {"runs", runs}};
}

// A JSON text made safe inside <script>: no "</" can close the element early.
std::string ScriptSafe(std::string s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') {
      out += "\\u003c";
    } else {
      out += s[i];
    }
  }
  return out;
}

constexpr const char* kHead = R"HTML(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>aiscale report</title>
<style>
body{font-family:system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:16px;color:#222}
h1{font-size:20px;margin:0 0 8px} h2{font-size:15px;margin:14px 0 4px}
table{border-collapse:collapse;margin:8px 0 16px} td,th{border:1px solid #ccc;padding:4px 10px;text-align:right;font-size:13px}
th{background:#f3f3f3} td:first-child,th:first-child{text-align:left}
.runs{display:flex;gap:18px;flex-wrap:nowrap} .run{flex:1;min-width:0}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.sw{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:4px;border:1px solid #999}
svg text{font-size:11px;fill:#444}
</style></head><body>
<h1 id="title">aiscale report</h1>
<div class="legend"><span><i class="sw" style="background:#f7dcaa"></i>load</span><span><i class="sw" style="background:#ffffff"></i>compute</span><span><i class="sw" style="background:#dccbf2"></i>eval</span><span><i class="sw" style="background:#cfcfcf"></i>restarting</span><span><i class="sw" style="background:#d62728"></i>node failure</span><span><i class="sw" style="background:#1f77b4"></i>desired / value</span><span><i class="sw" style="background:#2ca02c"></i>ready</span></div>
<h2>Summary</h2><div id="summary"></div>
<div class="runs" id="runs"></div>
<script type="application/json" id="data">)HTML";

constexpr const char* kTail = R"HTML(</script>
<script>
(function(){
const D = JSON.parse(document.getElementById('data').textContent);
document.getElementById('title').textContent = 'aiscale report: ' + D.scenario;
const runs = D.runs;
const fmt = (v, d) => (typeof v === 'number') ? v.toFixed(d) : (v === undefined ? '' : String(v));
// Summary table: one column per run, ratios against static when it ran.
const rows = [['GPU-hours','gpu_hours',1],['completion time (h)','completion_time_s',2,1/3600],
  ['mean GPU utilization','mean_gpu_util',3],['rescales','rescales',0],['rescales per hour','rescales_per_hour',2],
  ['max failure replacement (s)','max_failure_replacement_s',0],['cost (USD)','cost_usd',0],['cut at duration limit','cut',0]];
const st = runs.find(r => r.policy === 'static');
let h = '<table><tr><th>metric</th>' + runs.map(r => '<th>' + r.policy + '</th>').join('');
if (st) h += runs.filter(r => r !== st).map(r => '<th>' + r.policy + ' / static</th>').join('');
h += '</tr>';
for (const [label, key, dec, scale] of rows) {
  h += '<tr><td>' + label + '</td>';
  const val = r => { const v = r.summary[key]; return (typeof v === 'number' && scale) ? v * scale : v; };
  h += runs.map(r => '<td>' + fmt(val(r), dec) + '</td>').join('');
  if (st) h += runs.filter(r => r !== st).map(r => { const a = val(r), b = val(st);
    return '<td>' + ((typeof a === 'number' && typeof b === 'number' && b !== 0) ? (a / b).toFixed(3) : '') + '</td>'; }).join('');
  h += '</tr>';
}
document.getElementById('summary').innerHTML = h + '</table>';

const tmax = Math.max(1, ...runs.map(r => r.timeline.length ? r.timeline[r.timeline.length - 1].t_s : 1));
const maxOf = k => Math.max(1, ...runs.map(r => Math.max(0, ...r.timeline.map(p => p[k] || 0))));
const W = 620, H = 170, L = 48, R = 10, T = 10, B = 22;
const PH = {0: '#f7dcaa', 2: '#dccbf2'};
function chart(run, title, series, ymax) {
  const x = t => L + (W - L - R) * t / tmax, y = v => T + (H - T - B) * (1 - v / ymax);
  let s = '<svg width="100%" viewBox="0 0 ' + W + ' ' + H + '" role="img">';
  const tl = run.timeline;
  for (let i = 0; i + 1 < tl.length; ++i) {
    const p = tl[i], fill = p.restarting ? '#cfcfcf' : PH[p.phase];
    if (fill) s += '<rect x="' + x(p.t_s) + '" y="' + T + '" width="' + Math.max(0.5, x(tl[i+1].t_s) - x(p.t_s)) + '" height="' + (H - T - B) + '" fill="' + fill + '"/>';
  }
  for (let k = 0; k <= 4; ++k) { const v = ymax * k / 4;
    s += '<line x1="' + L + '" x2="' + (W - R) + '" y1="' + y(v) + '" y2="' + y(v) + '" stroke="#eee"/>';
    s += '<text x="' + (L - 4) + '" y="' + (y(v) + 4) + '" text-anchor="end">' + (v >= 100 ? v.toFixed(0) : v.toFixed(v >= 10 ? 0 : 1)) + '</text>'; }
  const hours = tmax / 3600, step = hours > 48 ? 12 : hours > 12 ? 4 : hours > 3 ? 1 : 0.25;
  for (let hh = 0; hh <= hours + 1e-9; hh += step) s += '<text x="' + x(hh * 3600) + '" y="' + (H - 6) + '" text-anchor="middle">' + hh + 'h</text>';
  for (const [key, color, stepwise] of series) {
    let d = '';
    tl.forEach((p, i) => { const v = p[key] || 0;
      if (i === 0) d += 'M' + x(p.t_s) + ' ' + y(v);
      else { if (stepwise) d += 'L' + x(p.t_s) + ' ' + y(tl[i-1][key] || 0); d += 'L' + x(p.t_s) + ' ' + y(v); } });
    s += '<path d="' + d + '" fill="none" stroke="' + color + '" stroke-width="1.4"/>';
  }
  for (const f of run.failures) s += '<line x1="' + x(f.t_s) + '" x2="' + x(f.t_s) + '" y1="' + T + '" y2="' + (H - B) + '" stroke="#d62728" stroke-width="1.5" stroke-dasharray="4 2"/>';
  for (const r of run.rescales) s += '<path d="M' + (x(r.t_s) - 4) + ' ' + T + 'L' + (x(r.t_s) + 4) + ' ' + T + 'L' + x(r.t_s) + ' ' + (T + 7) + 'Z" fill="#444"/>';
  s += '<rect x="' + L + '" y="' + T + '" width="' + (W - L - R) + '" height="' + (H - T - B) + '" fill="none" stroke="#999"/>';
  return '<h2>' + title + '</h2>' + s + '</svg>';
}
const nmax = maxOf('desired') + 1, smax = maxOf('samples_per_s') * 1.1;
document.getElementById('runs').innerHTML = runs.map(run => '<div class="run"><h2 style="font-size:17px">' + run.policy + '</h2>' +
  chart(run, 'nodes: desired (blue) vs ready (green)', [['desired', '#1f77b4', true], ['ready', '#2ca02c', true]], nmax) +
  chart(run, 'GPU utilization of allocated GPUs (%)', [['gpu_util', '#1f77b4', true]], 100) +
  chart(run, 'samples/s', [['samples_per_s', '#1f77b4', true]], smax) + '</div>').join('');
})();
</script></body></html>
)HTML";

}  // namespace

std::string ReportHtml(const nlohmann::json& report) {
  return std::string(kHead) + ScriptSafe(ChartData(report).dump()) + kTail;
}

}  // namespace aiscale::sim
