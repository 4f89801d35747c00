#!/usr/bin/python3
"""One /metrics page for many vLLM-like workloads, for benchmarks (Python 3 stdlib only).

Serves the gauges vllm:num_requests_running, vllm:num_requests_waiting and
vllm:kv_cache_usage_perc (names and types as vLLM's Prometheus logger exports them; see
model_server.py) for --workloads workloads named w0, w1, ... with --pods pods each, labelled
{workload="w12",pod="w12-0"}. Values follow a slow per-workload wave (deterministic in time),
so a scraper sees them change between scrapes. Prints "listening port=P" (flushed) once bound;
exits 0 on SIGTERM or SIGINT.
"""

import argparse
import http.server
import math
import signal
import sys
import threading
import time


def render(workloads, pods, now):
    out = []
    families = (
        ("vllm:num_requests_running", "Number of requests in model execution batches.",
         lambda base, p: 20 + 2 * base + 0.5 * p),
        ("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
         lambda base, p: max(0.0, 1 + base)),
        ("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
         lambda base, p: 0.6 + 0.1 * base),
    )
    for name, help_text, value in families:
        out.append("# HELP %s %s" % (name, help_text))
        out.append("# TYPE %s gauge" % name)
        for w in range(workloads):
            base = math.sin(now / 60.0 + w / 7.0)  # in [-1, 1]
            for p in range(pods):
                out.append('%s{workload="w%d",pod="w%d-%d"} %.4f' %
                           (name, w, w, p, value(base, p)))
    return ("\n".join(out) + "\n").encode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=2)
    args = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = render(args.workloads, args.pods, time.time())
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("listening port=%d" % server.server_address[1], flush=True)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
