#!/usr/bin/python3
"""Asks a Prometheus HTTP API (/api/v1/...) a question, for integration tests (stdlib only).

  prom_query.py --url http://127.0.0.1:P query EXPR [--wait S]
      one line per series: '{label="v",...} value'; exit 1 when the result is empty (after
      polling up to S seconds for a non-empty one)
  prom_query.py --url U range EXPR --since S [--step 1] [--agg max|min|last|count]
      one number: the aggregate over every point of every series in the last S seconds;
      exit 1 when there is no point
  prom_query.py --url U targets
      one line per active target: 'job instance health last_error'

Exit status 2 on an HTTP, transport or API error (the error goes to stderr).
"""

import argparse
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


class ApiError(Exception):
    def __init__(self, msg, retryable=False):
        super().__init__(msg)
        self.retryable = retryable  # transport trouble, not a bad query


def api_get(base, path, params, timeout=5.0):
    url = "%s%s?%s" % (base.rstrip("/"), path, urllib.parse.urlencode(params))
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            doc = json.loads(resp.read())
    except urllib.error.HTTPError as e:
        body = e.read().decode(errors="replace")
        raise ApiError("%s: HTTP %d: %s" % (path, e.code, body[:500]), e.code >= 500)
    except (OSError, ValueError) as e:
        raise ApiError("%s: %s" % (path, e), True)
    if doc.get("status") != "success":
        raise ApiError("%s: %s: %s" % (path, doc.get("errorType"), doc.get("error")))
    return doc["data"]


def fmt_labels(metric):
    return "{%s}" % ",".join('%s="%s"' % (k, v) for k, v in sorted(metric.items()))


def instant(base, expr):
    data = api_get(base, "/api/v1/query", {"query": expr})
    kind, result = data["resultType"], data["result"]
    if kind == "scalar" or kind == "string":
        return ["{} %s" % result[1]]
    return ["%s %s" % (fmt_labels(r["metric"]), r["value"][1]) for r in result]


def cmd_query(args):
    deadline = time.monotonic() + args.wait
    while True:
        try:
            lines = instant(args.url, args.expr)
        except ApiError as e:
            if not e.retryable or time.monotonic() >= deadline:
                raise
            lines = []  # not up yet, or a rule still loading: poll again
        if lines or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    for line in lines:
        print(line)
    return 0 if lines else 1


def cmd_range(args):
    end = time.time()
    data = api_get(args.url, "/api/v1/query_range", {
        "query": args.expr, "start": "%.3f" % (end - args.since), "end": "%.3f" % end,
        "step": "%gs" % args.step})
    points = [float(v) for series in data["result"] for _, v in series["values"]]
    if not points:
        return 1
    agg = {"max": max, "min": min, "last": lambda p: p[-1], "count": len}[args.agg]
    print("%g" % agg(points))
    return 0


def cmd_targets(args):
    data = api_get(args.url, "/api/v1/targets", {"state": "active"})
    for t in data.get("activeTargets", []):
        labels = t.get("labels", {})
        print("%s %s %s %s" % (labels.get("job"), labels.get("instance"), t.get("health"),
                               json.dumps(t.get("lastError", ""))))
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True, help="Prometheus base URL")
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("query")
    q.add_argument("expr")
    q.add_argument("--wait", type=float, default=0.0)
    r = sub.add_parser("range")
    r.add_argument("expr")
    r.add_argument("--since", type=float, required=True)
    r.add_argument("--step", type=float, default=1.0)
    r.add_argument("--agg", default="max", choices=["max", "min", "last", "count"])
    sub.add_parser("targets")
    args = p.parse_args(argv)
    try:
        return {"query": cmd_query, "range": cmd_range, "targets": cmd_targets}[args.cmd](args)
    except ApiError as e:
        sys.stderr.write("prom_query: %s\n" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
