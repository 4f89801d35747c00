#!/usr/bin/python3
"""An open-loop HTTP load generator for integration tests (Python 3 stdlib only).

  python3 loadgen.py --url http://127.0.0.1:P/v1/completions --schedule "10s@2,30s@8,30s@1"
                     [--seed 1 | --constant] [--timeout 30] [--out summary.json]

The schedule is segments of DURATION@RATE (requests per second; durations like 500ms, 10s, 2m
or bare seconds; rate 0 is a pause). Arrivals are Poisson (seeded, so a run is reproducible) or,
with --constant, evenly spaced. Open loop: every request is sent at its arrival time on its own
thread whatever the server's speed, with a per-request --timeout; slow answers do not slow the
arrivals. It always stops by itself: after the schedule (or --max-requests, or --max-duration),
it waits at most --drain seconds (default: --timeout) for answers still due, and counts the rest
as unfinished. SIGINT or SIGTERM ends the schedule early the same way: no more arrivals, the
drain, then the summary (so a caller can run load "until" something happens). At most --max-inflight requests are outstanding; an arrival beyond that is
counted as dropped, not sent.

The JSON summary (to --out, and one line per segment on stdout) has, overall and per segment:
sent, ok (2xx), errors (by kind: http_<code>, timeout, connect, other), dropped, unfinished,
latency_ms p50/p90/p99/max/mean of the answered requests, and the replicas that answered
(from a "replica" field in a JSON answer, as model_server.py gives). Exit status 0 whenever the
run completed, 2 on bad arguments.
"""

import argparse
import collections
import json
import random
import re
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|h)?\s*$")
UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text):
    m = DURATION_RE.match(text)
    if not m:
        raise ValueError("bad duration %r (want e.g. 500ms, 10s, 2m)" % text)
    return float(m.group(1)) * UNIT_S[m.group(2)]


def parse_schedule(text):
    """'10s@2,30s@8' -> [(10.0, 2.0), (30.0, 8.0)]. Raises ValueError."""
    segments = []
    for part in text.split(","):
        if not part.strip():
            continue
        if "@" not in part:
            raise ValueError("bad segment %r (want DURATION@RATE)" % part)
        dur, rate = part.split("@", 1)
        d, r = parse_duration(dur), float(rate)
        if d <= 0 or r < 0 or r != r:
            raise ValueError("bad segment %r (duration > 0, rate >= 0)" % part)
        segments.append((d, r))
    if not segments:
        raise ValueError("empty schedule")
    return segments


def arrivals(segments, constant, rng):
    """Yields (offset_s, segment_index) of every arrival, in order."""
    start = 0.0
    for i, (dur, rate) in enumerate(segments):
        end = start + dur
        if rate > 0:
            if constant:
                t = start
                while t < end - 1e-9:
                    yield t, i
                    t += 1.0 / rate
            else:
                # Poisson: exponential gaps; memoryless, so restarting at each boundary is exact.
                t = start + rng.expovariate(rate)
                while t < end:
                    yield t, i
                    t += rng.expovariate(rate)
        start = end


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[k]


class Stats:
    """Per-segment counters; thread-safe."""

    def __init__(self, n):
        self.lock = threading.Lock()
        self.seg = [{"sent": 0, "ok": 0, "errors": collections.Counter(), "dropped": 0,
                     "latencies": [], "replicas": collections.Counter()} for _ in range(n)]
        self.outstanding = 0
        self.idle = threading.Condition(self.lock)

    def begin(self, i, max_inflight):
        with self.lock:
            if self.outstanding >= max_inflight:
                self.seg[i]["dropped"] += 1
                return False
            self.outstanding += 1
            self.seg[i]["sent"] += 1
            return True

    def end(self, i, ok, kind, latency_s, replica):
        with self.lock:
            s = self.seg[i]
            if ok:
                s["ok"] += 1
                s["latencies"].append(latency_s * 1000.0)
                if replica is not None:
                    s["replicas"][str(replica)] += 1
            else:
                s["errors"][kind] += 1
            self.outstanding -= 1
            self.idle.notify_all()

    def wait_idle(self, timeout):
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.outstanding > 0 and time.monotonic() < deadline:
                self.idle.wait(max(0.0, deadline - time.monotonic()))
            return self.outstanding


def summarize(parts):
    lat = sorted(x for p in parts for x in p["latencies"])
    errors, replicas = collections.Counter(), collections.Counter()
    for p in parts:
        errors.update(p["errors"])
        replicas.update(p["replicas"])
    sent = sum(p["sent"] for p in parts)
    ok = sum(p["ok"] for p in parts)
    out = {"sent": sent, "ok": ok, "errors": sum(errors.values()),
           "errors_by_kind": dict(errors), "dropped": sum(p["dropped"] for p in parts),
           "replicas": dict(replicas)}
    out["latency_ms"] = {
        "p50": percentile(lat, 0.5), "p90": percentile(lat, 0.9), "p99": percentile(lat, 0.99),
        "max": lat[-1] if lat else None, "mean": sum(lat) / len(lat) if lat else None}
    return out


def send_one(args, body, stats, i):
    req = urllib.request.Request(args.url, data=body, method=args.method,
                                 headers={"Content-Type": "application/json"} if body else {})
    t0 = time.monotonic()
    ok, kind, replica = False, "other", None
    try:
        with urllib.request.urlopen(req, timeout=args.timeout) as resp:
            data = resp.read()
            ok = 200 <= resp.status < 300
            kind = "http_%d" % resp.status
            try:
                replica = json.loads(data).get("replica")
            except (ValueError, AttributeError):
                pass
    except urllib.error.HTTPError as e:
        kind = "http_%d" % e.code
    except (socket.timeout, TimeoutError):
        kind = "timeout"
    except urllib.error.URLError as e:
        kind = "timeout" if isinstance(e.reason, (socket.timeout, TimeoutError)) else "connect"
    except (OSError, ValueError):
        kind = "other"
    stats.end(i, ok, kind, time.monotonic() - t0, replica)


STOP = threading.Event()  # set by SIGINT/SIGTERM: end the schedule, drain, report


def run(args, segments):
    rng = random.Random(args.seed)
    stats = Stats(len(segments))
    body = None if args.method == "GET" else args.body.encode()
    started = time.monotonic()
    count = 0
    for offset, i in arrivals(segments, args.constant, rng):
        if count >= args.max_requests or offset >= args.max_duration or STOP.is_set():
            break
        delay = started + offset - time.monotonic()
        if delay > 0 and STOP.wait(delay):
            break
        count += 1
        if stats.begin(i, args.max_inflight):
            threading.Thread(target=send_one, args=(args, body, stats, i), daemon=True).start()
    # Sleep out the rest of the schedule, so a trailing pause is a pause.
    rest = min(sum(d for d, _ in segments), args.max_duration) - (time.monotonic() - started)
    if rest > 0 and count < args.max_requests:
        STOP.wait(rest)
    unfinished = stats.wait_idle(args.drain if args.drain is not None else args.timeout)
    return stats, unfinished, time.monotonic() - started


def report(args, segments, stats, unfinished, elapsed):
    with stats.lock:
        seg_out = []
        for (dur, rate), s in zip(segments, stats.seg):
            entry = summarize([s])
            entry.update({"duration_s": dur, "rate": rate})
            seg_out.append(entry)
        total = summarize(stats.seg)
    total.update({"unfinished": unfinished, "elapsed_s": round(elapsed, 3)})
    doc = {"url": args.url, "schedule": args.schedule, "seed": args.seed,
           "arrivals": "constant" if args.constant else "poisson", "total": total,
           "segments": seg_out}
    for n, s in enumerate(seg_out):
        lat = s["latency_ms"]
        print("segment %d %gs@%g: sent=%d ok=%d errors=%d dropped=%d p50=%s p99=%s ms" %
              (n, s["duration_s"], s["rate"], s["sent"], s["ok"], s["errors"], s["dropped"],
               fmt_ms(lat["p50"]), fmt_ms(lat["p99"])), flush=True)
    print("total: sent=%d ok=%d errors=%d dropped=%d unfinished=%d replicas=%s" %
          (total["sent"], total["ok"], total["errors"], total["dropped"], unfinished,
           json.dumps(total["replicas"], sort_keys=True)), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=2, sort_keys=True)
            f.write("\n")


def fmt_ms(v):
    return "-" if v is None else "%.1f" % v


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--schedule", required=True, help='e.g. "10s@2,30s@8,30s@1"')
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--constant", action="store_true", help="evenly spaced arrivals")
    p.add_argument("--method", default="POST", choices=["POST", "GET"])
    p.add_argument("--body", default='{"model": "fake/tiny-model", "prompt": "Hello, my name is",'
                   ' "max_tokens": 16}')
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    p.add_argument("--drain", type=float, help="seconds to wait for answers after the schedule")
    p.add_argument("--max-requests", type=int, default=100000)
    p.add_argument("--max-duration", type=float, default=3600.0, help="seconds of arrivals")
    p.add_argument("--max-inflight", type=int, default=1000)
    p.add_argument("--out", help="JSON summary file")
    args = p.parse_args(argv)
    try:
        segments = parse_schedule(args.schedule)
    except ValueError as e:
        p.error(str(e))
    if args.timeout <= 0 or args.max_requests < 1 or args.max_inflight < 1:
        p.error("--timeout > 0, --max-requests >= 1 and --max-inflight >= 1 are required")
    return args, segments


def main(argv):
    args, segments = parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: STOP.set())
    stats, unfinished, elapsed = run(args, segments)
    report(args, segments, stats, unfinished, elapsed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
