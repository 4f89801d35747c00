#!/usr/bin/python3
"""Holds abusive connections open against an HTTP server while probing its /healthz.

Python 3 stdlib only. For --seconds it keeps open:
  --idle N       connections that send nothing (reopened when the server closes one),
  --slow N       clients that send a request one byte every --slow-every seconds (reopened),
  --headers N    clients that stream header lines as fast as the server reads them (reopened);
and meanwhile asks GET /healthz on a fresh connection every --probe-every seconds, timing each
answer from connect to the last byte. With --pid it samples that process's resident memory.

Prints one line of JSON: probes, failures (no 200 within 5 s), p50/p99/max seconds, the
connections held at the end of each kind, how often the server closed them, max_rss_kb.
"""

import argparse
import json
import os
import socket
import threading
import time


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setblocking(False)
    return s


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Pool:
    """N connections of one kind; `step(sock, i)` feeds one, returns False when it closed."""

    def __init__(self, port, n, step):
        self.port, self.step = port, step
        self.socks = [None] * n
        self.closed_by_server = 0
        self.refused = 0

    def tick(self):
        for i, s in enumerate(self.socks):
            if s is None:
                try:
                    self.socks[i] = s = connect(self.port)
                except OSError:
                    self.refused += 1
                    continue
            try:
                alive = self.step(s, i)
            except (BlockingIOError, InterruptedError):
                alive = True
            except OSError:
                alive = False
            if not alive:
                self.closed_by_server += 1
                try:
                    s.close()
                except OSError:
                    pass
                self.socks[i] = None

    def held(self):
        return sum(1 for s in self.socks if s is not None)


def server_closed(s):
    """True when the server has closed (or answered and is closing) the connection."""
    try:
        data = s.recv(65536)
        return data == b"" or len(data) > 0
    except (BlockingIOError, InterruptedError):
        return False


def probe(port):
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.settimeout(5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        ok = data.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return ok, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--idle", type=int, default=500)
    ap.add_argument("--slow", type=int, default=40)
    ap.add_argument("--slow-every", type=float, default=1.5)
    ap.add_argument("--headers", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--probe-every", type=float, default=0.05)
    ap.add_argument("--pid", type=int, default=0)
    a = ap.parse_args()

    request = b"GET /metrics HTTP/1.1\r\nHost: slow\r\n"
    slow_pos = {}
    slow_next = {}

    def idle_step(s, i):
        return not server_closed(s)

    def slow_step(s, i):
        if server_closed(s):
            slow_pos.pop(i, None)
            return False
        now = time.monotonic()
        if now >= slow_next.get(i, 0):
            pos = slow_pos.get(i, 0)
            s.send(request[pos % len(request):pos % len(request) + 1])
            slow_pos[i] = pos + 1
            slow_next[i] = now + a.slow_every
        return True

    counter = [0]

    def header_step(s, i):
        if server_closed(s):
            return False
        if counter[0] == 0:
            s.send(b"GET /healthz HTTP/1.1\r\n")
        for _ in range(64):
            counter[0] += 1
            s.send(b"X-Flood-%d: %s\r\n" % (counter[0], b"a" * 64))
        return True

    pools = {"idle": Pool(a.port, a.idle, idle_step), "slow": Pool(a.port, a.slow, slow_step),
             "headers": Pool(a.port, a.headers, header_step)}
    times, failures, max_rss = [], 0, 0
    stop = threading.Event()

    def feed():
        while not stop.is_set():
            for p in pools.values():
                p.tick()
            time.sleep(0.01)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    time.sleep(1.0)  # let the pools fill
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        ok, took = probe(a.port)
        times.append(took)
        failures += 0 if ok else 1
        if a.pid:
            max_rss = max(max_rss, rss_kb(a.pid))
        time.sleep(a.probe_every)
    held = {k: p.held() for k, p in pools.items()}
    stop.set()
    feeder.join(5)
    times.sort()
    q = lambda f: times[min(len(times) - 1, int(f * len(times)))] if times else None
    print(json.dumps({
        "probes": len(times), "failures": failures, "p50_s": q(0.50), "p99_s": q(0.99),
        "max_s": times[-1] if times else None, "held_at_end": held,
        "closed_by_server": {k: p.closed_by_server for k, p in pools.items()},
        "refused": {k: p.refused for k, p in pools.items()}, "max_rss_kb": max_rss}))


if __name__ == "__main__":
    main()
