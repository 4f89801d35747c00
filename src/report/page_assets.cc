#include "report/page_assets.h"

namespace aiscale::report {

std::string_view PageStyle() {
  return R"CSS(
body{font-family:system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:16px;color:#222;max-width:1400px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:18px 0 6px} h3{font-size:13px;margin:12px 0 2px;font-weight:600}
.meta{font-size:13px;color:#555;margin:4px 0}
table{border-collapse:collapse;margin:8px 0 12px} td,th{border:1px solid #ccc;padding:4px 10px;text-align:right;font-size:13px}
th{background:#f3f3f3} td:first-child,th:first-child{text-align:left}
th.oracle,td.oracle{background:#f8f8f8;font-style:italic} td.bad{color:#b00020;font-weight:600}
.verdicts{font-size:13px;margin:4px 0 12px;padding-left:20px} .verdicts li{margin:3px 0}
.verdicts li.ok::marker{color:#2ca02c} .verdicts li.bad::marker{color:#d62728} .why{color:#7a1f1f}
.runs{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:18px}
.run{min-width:0} h3.policy{font-size:15px}
.legend span{display:inline-block;margin-right:14px;font-size:12px;vertical-align:middle}
.legend [data-toggle]{cursor:pointer;user-select:none} .legend .off{opacity:.35;text-decoration:line-through}
.legend svg{vertical-align:middle;margin-right:4px}
.sw{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:4px;border:1px solid #999}
svg text{font-size:11px;fill:#444} path.off-policy,path.off-kind{display:none}
.tip{position:absolute;pointer-events:none;background:#fff;border:1px solid #999;padding:4px 6px;font-size:12px;box-shadow:0 1px 4px rgba(0,0,0,.2);z-index:9}
.tip i{display:inline-block;width:10px;height:3px;margin-right:4px;vertical-align:middle}
.log{max-height:480px;overflow:auto;border:1px solid #ddd}
.plot,.run,.log{content-visibility:auto} .plot{contain-intrinsic-size:auto 230px}
.run{contain-intrinsic-size:auto 640px} .log{contain-intrinsic-size:auto 480px} .log table{margin:0} .log td{text-align:left;vertical-align:top}
.log td.n{text-align:right;white-space:nowrap} .log th{text-align:left} .logbar{font-size:13px;margin:6px 0} summary{font-size:13px;cursor:pointer;margin:4px 0} .logbar input{width:24em}
)CSS";
}

std::string_view PageScript() {
  return R"JS(
(function () {
  'use strict';
  function parsePts(p) {
    if (!p._pts) {
      var a = (p.getAttribute('data-pts') || '').split(' '), t = [], v = [];
      for (var i = 0; i + 1 < a.length; i += 2) {
        t.push(+a[i]);
        v.push(a[i + 1] === '-' ? NaN : +a[i + 1]);
      }
      p._pts = {t: t, v: v};
    }
    return p._pts;
  }
  function valueAt(d, t) {
    var lo = 0, hi = d.t.length - 1;
    if (hi < 0 || t < d.t[0]) return NaN;
    while (lo < hi) {
      var m = (lo + hi + 1) >> 1;
      if (d.t[m] <= t) lo = m; else hi = m - 1;
    }
    return d.v[lo];
  }
  function fmtTime(s) {
    s = Math.max(0, Math.round(s));
    var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    return (d ? d + 'd ' : '') + h + 'h' + (m < 10 ? '0' : '') + m + 'm';
  }
  function fmtValue(v) {
    if (isNaN(v)) return 'no value';
    var a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 1 ? String(+v.toFixed(2)) : String(+v.toPrecision(3));
  }
  var tip = document.createElement('div');
  tip.className = 'tip';
  tip.hidden = true;
  document.body.appendChild(tip);
  function line(text, colour) {
    var div = document.createElement('div');
    if (colour) {
      var key = document.createElement('i');
      key.style.background = colour;
      div.appendChild(key);
    }
    div.appendChild(document.createTextNode(text));
    tip.appendChild(div);
  }
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var x0 = +svg.getAttribute('data-x0'), x1 = +svg.getAttribute('data-x1');
    var tMax = +svg.getAttribute('data-t-max');
    var valueX = svg.getAttribute('data-x-kind') === 'value';
    var cursor = svg.querySelector('line.cursor');
    function hide() {
      tip.hidden = true;
      if (cursor) cursor.setAttribute('visibility', 'hidden');
    }
    svg.addEventListener('mouseleave', hide);
    svg.addEventListener('mousemove', function (e) {
      var m = svg.getScreenCTM();
      if (!m || !m.a) return;
      var x = (e.clientX - m.e) / m.a;
      if (x < x0 || x > x1) return hide();
      var t = (x - x0) / (x1 - x0) * tMax;
      if (cursor) {
        cursor.setAttribute('x1', x);
        cursor.setAttribute('x2', x);
        cursor.setAttribute('visibility', 'visible');
      }
      tip.textContent = '';
      line('at ' + (valueX ? fmtValue(t) : fmtTime(t)));
      svg.querySelectorAll('path.series[data-pts]').forEach(function (p) {
        if (p.classList.contains('off-policy') || p.classList.contains('off-kind')) return;
        line((p.getAttribute('data-label') || '') + ': ' + fmtValue(valueAt(parsePts(p), t)),
             p.getAttribute('stroke'));
      });
      tip.hidden = false;
      tip.style.left = (e.pageX + 14) + 'px';
      tip.style.top = (e.pageY + 14) + 'px';
    });
  });
  document.querySelectorAll('[data-toggle]').forEach(function (el) {
    el.addEventListener('click', function () {
      var spec = el.getAttribute('data-toggle'), cut = spec.indexOf(':');
      var attr = spec.slice(0, cut), value = spec.slice(cut + 1);
      var scope = el.closest('section') || document;
      var off = el.classList.toggle('off');
      scope.querySelectorAll('path.series').forEach(function (p) {
        if (p.getAttribute('data-' + attr) === value) p.classList.toggle('off-' + attr, off);
      });
    });
  });
  document.querySelectorAll('input.logq').forEach(function (q) {
    var table = document.getElementById(q.getAttribute('data-log'));
    if (!table) return;
    var rows = Array.prototype.slice.call(table.querySelectorAll('tbody tr'));
    var texts = rows.map(function (tr) { return tr.textContent.toLowerCase(); });
    var run = document.querySelector('select.logrun[data-log="' + table.id + '"]');
    var count = document.querySelector('.logcount[data-log="' + table.id + '"]');
    var box = document.querySelector('details.logbox[data-log="' + table.id + '"]');
    function apply() {
      var s = q.value.toLowerCase(), r = run ? run.value : '', n = 0;
      rows.forEach(function (tr, i) {
        var show = (!r || tr.getAttribute('data-run') === r) && (!s || texts[i].indexOf(s) >= 0);
        tr.hidden = !show;
        if (show) n++;
      });
      if (count) count.textContent = n + ' of ' + rows.length + ' shown';
      if (box && (s || r)) box.open = true;
    }
    q.addEventListener('input', apply);
    if (run) run.addEventListener('change', apply);
    var h = location.hash.match(/^#q=(.*)$/);
    if (h) q.value = decodeURIComponent(h[1]);
    apply();
  });
  document.documentElement.setAttribute('data-js', 'ready');
})();
)JS";
}

}  // namespace aiscale::report
