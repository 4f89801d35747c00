#!/usr/bin/python3
"""A training job that breaks the contract (docs/training-engine-contract.md), for bad-input
tests: it serves /metrics with the aiscale_training_* names but the values given here (NaN by
default), a phase aiscale does not know, and never acknowledges POST /checkpoint (it holds the
request open until the client gives up).

    fake_training_job.py --port 18400 [--samples-per-s nan] [--phase warmup] [--events FILE]

--events FILE: appends "start <pid>", "checkpoint-request" and "sigterm" lines.
"""
import argparse
import http.server
import os
import signal
import socketserver
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--samples-per-s", default="NaN")
    p.add_argument("--phase", default="warmup")
    p.add_argument("--events", default="")
    a = p.parse_args()

    def event(text):
        if a.events:
            with open(a.events, "a") as f:
                f.write(text + "\n")

    body = (
        "# TYPE aiscale_training_samples_per_second gauge\n"
        f"aiscale_training_samples_per_second {a.samples_per_s}\n"
        "# TYPE aiscale_training_samples_remaining gauge\n"
        "aiscale_training_samples_remaining 100000\n"
        "# TYPE aiscale_training_phase gauge\n"
        f'aiscale_training_phase{{phase="{a.phase}"}} 1\n'
        "# TYPE aiscale_training_world_size gauge\n"
        "aiscale_training_world_size 1\n"
    ).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            code, out = (200, body) if self.path == "/metrics" else (404, b"not found\n")
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def do_POST(self):
            event("checkpoint-request")
            time.sleep(3600)  # never acknowledges

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        allow_reuse_address = True
        daemon_threads = True

    def on_term(signum, frame):
        event("sigterm")
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    srv = Server(("127.0.0.1", a.port), Handler)
    event(f"start {os.getpid()}")
    print(f"fake training job on 127.0.0.1:{a.port}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
