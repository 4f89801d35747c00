#!/usr/bin/python3
"""Opens an aiscale report.html in headless Chromium and exercises it like a user (stdlib only).

  python3 browser_check.py --chromium /usr/bin/chromium --page FILE.html [--out DIR]
                           [--timeout 60]

Talks to the browser over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON
messages separated by NUL bytes on fds 3 and 4), so no port and no third-party client. The
browser runs with a fresh profile and no network (--headless --no-sandbox --disable-gpu
--disable-background-networking --disable-component-update --disable-sync --no-first-run).

What it does, in order: loads the page and waits for its load event, then for a rendered frame
(the wall time to each, from the request); records the page's own timings (navigation start to
DOMContentLoaded, load event, first contentful paint); moves
the mouse over the middle of the first chart and reads the hover read-out; clicks the first
legend entry that toggles series (a run, or a kind of line) and counts the series shown, then
clicks it again; types
into the decision log's search box and counts the rows left; reloads with "#q=TEXT" and counts
again; saves a screenshot. Every console error, uncaught exception and failed load is
collected. Prints one JSON object (also to DIR/browser.json with --out):
  {"navigate_to_load_s", "navigate_to_frame_s", "renderer_cpu_s": {ProcessTime, ThreadTime,
   TaskDuration, ScriptDuration, LayoutDuration, RecalcStyleDuration}, "load_ms", "dcl_ms", "fcp_ms" (-1: none
   recorded), "js_ready", "charts", "series", "hover": [lines],
   "toggle": {"toggle", "shown_before", "shown_off", "shown_again"},
   "search": {"query", "rows", "opened", "shown", "all_match"}, "fragment_shown", "errors": [...]}
Exit status 0 when it ran (the caller judges the figures), 2 on bad arguments or no browser.
"""

import argparse
import base64
import fcntl
import json
import os
import select
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--remote-debugging-pipe", "--window-size=1400,1000", "--hide-scrollbars"]


class Browser:
    def __init__(self, chromium, profile, timeout):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The browser reads commands on fd 3 and writes answers on fd 4. Both ends are moved
        # above 10 first, so placing one cannot overwrite the other; every other descriptor of
        # ours is close-on-exec (Python's default), so the browser gets only these.
        def fds():
            a = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(w, 4)
        self.proc = subprocess.Popen([chromium] + FLAGS + ["--user-data-dir=" + profile],
                                     preexec_fn=fds, close_fds=False,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.timeout = timeout
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except Exception:  # noqa: BLE001 - closing a browser that is gone is fine
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise TimeoutError("no answer from the browser")
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise EOFError("the browser closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        if os.environ.get("BROWSER_CHECK_DEBUG"):
            print("->", method, file=sys.stderr)
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def js(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("page script failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def mouse(self, kind, x, y, button="none", clicks=0):
        self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                               "clickCount": clicks})

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, "left", 1)
        self.mouse("mouseReleased", x, y, "left", 1)


def centre_of(b, selector):
    """Scrolls the first element matching selector into view; its centre in the viewport."""
    return b.js("""(() => { const e = document.querySelector(%s); if (!e) return null;
        e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();
        return [r.left + r.width / 2, r.top + r.height / 2]; })()""" % json.dumps(selector))


def load(b, url):
    b.call("Page.navigate", {"url": url})
    b.wait_event("Page.loadEventFired")


def run(args):
    out = {"errors": []}
    with tempfile.TemporaryDirectory(prefix="aiscale-browser-") as profile:
        b = Browser(args.chromium, profile, args.timeout)
        try:
            target = b.call("Target.createTarget", {"url": "about:blank"}, session=False)
            b.session = b.call("Target.attachToTarget", {"targetId": target["targetId"],
                                                         "flatten": True},
                               session=False)["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Performance"):
                b.call(domain + ".enable")
            url = "file://" + os.path.abspath(args.page)
            # Wall time from asking for the page to its load event, and to a rendered frame
            # of the viewport (a screenshot forces one).
            t0 = time.monotonic()
            load(b, url)
            out["navigate_to_load_s"] = round(time.monotonic() - t0, 3)
            b.call("Page.captureScreenshot", {"format": "png"})
            out["navigate_to_frame_s"] = round(time.monotonic() - t0, 3)
            # CPU the page's renderer spent (its process and main thread) to that frame, and
            # the main thread's busy time by kind: less moved by other load than wall times.
            m = {x["name"]: x["value"] for x in b.call("Performance.getMetrics")["metrics"]}
            out["renderer_cpu_s"] = {k: round(m.get(k, -1), 3) for k in (
                "ProcessTime", "ThreadTime", "TaskDuration", "ScriptDuration", "LayoutDuration",
                "RecalcStyleDuration")}
            t = b.js("""(() => { const n = performance.getEntriesByType('navigation')[0];
                const p = performance.getEntriesByName('first-contentful-paint')[0];
                return [n.domContentLoadedEventEnd, n.loadEventEnd, p ? p.startTime : -1]; })()""")
            out["dcl_ms"], out["load_ms"], out["fcp_ms"] = t
            out["js_ready"] = b.js("document.documentElement.getAttribute('data-js') === 'ready'")
            out["charts"] = b.js("document.querySelectorAll('svg.chart').length")
            out["series"] = b.js("document.querySelectorAll('path.series').length")
            out["hover"] = hover(b)
            out["toggle"] = toggle(b)
            out["search"] = search(b)
            # A fragment alone is a same-document navigation (no load event): leave the page first.
            load(b, "about:blank")
            load(b, url + "#q=" + out["search"]["query"])
            out["fragment_shown"] = b.js(
                "[...document.querySelectorAll('#decisions tbody tr')].filter(r => !r.hidden).length")
            if args.out:
                shot = b.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
                with open(os.path.join(args.out, "report.png"), "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            out["errors"] = errors(b.events)
        finally:
            b.close()
    return out


def hover(b):
    xy = centre_of(b, "svg.chart")
    if not xy:
        return []
    b.mouse("mouseMoved", xy[0], xy[1])
    return b.js("""(() => { const t = document.querySelector('div.tip');
        return t && !t.hidden ? [...t.children].map(c => c.textContent) : []; })()""")


def toggle(b):
    """Clicks the first legend entry that toggles something (a run, or a kind of line)."""
    spec = b.js("""(() => { const e = document.querySelector('[data-toggle]');
        return e ? e.getAttribute('data-toggle') : null; })()""")
    if spec is None:
        return {}
    attr, value = spec.split(":", 1)
    shown = """[...document.querySelectorAll('path.series')].filter(p =>
        p.getAttribute('data-' + %s) === %s && getComputedStyle(p).display !== 'none').length
        """ % (json.dumps(attr), json.dumps(value))
    res = {"toggle": spec, "shown_before": b.js(shown)}
    sel = "[data-toggle=%s]" % json.dumps(spec)
    b.click(*centre_of(b, sel))
    res["shown_off"] = b.js(shown)
    b.click(*centre_of(b, sel))
    res["shown_again"] = b.js(shown)
    return res


def search(b):
    # The rule of the last row: a word the log has, so the filter keeps some rows, not all.
    query = b.js("""(() => { const r = [...document.querySelectorAll('#decisions tbody tr')];
        return r.length ? r[r.length - 1].children[5].textContent : ''; })()""") or "none"
    xy = centre_of(b, "input.logq")
    if xy:
        b.click(*xy)
        b.call("Input.insertText", {"text": query})
    return {"query": query, "rows": b.js("document.querySelectorAll('#decisions tbody tr').length"),
            "opened": b.js("!!(document.querySelector('details.logbox') || {}).open"),
            "shown": b.js("""[...document.querySelectorAll('#decisions tbody tr')]
                            .filter(r => !r.hidden).length"""),
            "all_match": b.js("""[...document.querySelectorAll('#decisions tbody tr')]
                .filter(r => !r.hidden).every(r => r.textContent.toLowerCase()
                .includes(%s.toLowerCase()))""" % json.dumps(query))}


def errors(events):
    out = []
    for m in events:
        p = m.get("params", {})
        if m.get("method") == "Runtime.exceptionThrown":
            out.append("exception: %s" % p.get("exceptionDetails", {}).get("text"))
        elif m.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console: %s" % [a.get("value") for a in p.get("args", [])])
        elif m.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append("log: %s" % p["entry"].get("text"))
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--chromium", default="/usr/bin/chromium")
    p.add_argument("--page", required=True)
    p.add_argument("--out")
    p.add_argument("--timeout", type=float, default=60)
    args = p.parse_args(argv)
    if not os.path.exists(args.chromium) or not os.path.exists(args.page):
        print("browser_check: no %s" % (args.page if os.path.exists(args.chromium)
                                         else args.chromium), file=sys.stderr)
        return 2
    out = run(args)
    text = json.dumps(out, indent=1, sort_keys=True)
    print(text)
    if args.out:
        with open(os.path.join(args.out, "browser.json"), "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
