#!/usr/bin/python3
"""A replica for the local actuator's tests.

Serves GET /health (503 until --health-delay seconds have passed, then 200) and POST /prestop,
/sleep and /wake_up on 127.0.0.1:--port, prints --ready-line after --health-delay, and appends what happens to it
to --events ("start <pid>", "child <pid>", "prestop", "sleep", "wake", "sigterm") so a test can check the order.
"""
import argparse
import http.server
import os
import signal
import subprocess
import sys
import threading
import time


def record(path, line):
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--health-delay", type=float, default=0.0)
    p.add_argument("--ready-line", default="")
    p.add_argument("--events", default="")
    p.add_argument("--ignore-term", action="store_true")
    p.add_argument("--spawn-child", action="store_true")
    p.add_argument("--crash-once", default="", help="marker file: exit 3 if it is absent")
    a = p.parse_args()
    started = time.monotonic()

    def on_term(signum, frame):
        record(a.events, "sigterm")
        if not a.ignore_term:
            os._exit(0)

    # The handler before "start": a test that signals once it sees "start" must find it set.
    signal.signal(signal.SIGTERM, on_term)
    record(a.events, "start %d" % os.getpid())
    if a.spawn_child:
        child = subprocess.Popen(["/bin/sleep", "300"])
        record(a.events, "child %d" % child.pid)
    if a.crash_once and not os.path.exists(a.crash_once):
        open(a.crash_once, "w").close()
        time.sleep(0.2)
        sys.exit(3)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            healthy = time.monotonic() - started >= a.health_delay
            self.send_response(200 if self.path == "/health" and healthy else 503)
            self.end_headers()

        def do_POST(self):
            if self.path == "/prestop":
                record(a.events, "prestop")
            elif self.path.startswith("/sleep"):  # vLLM's sleep mode: POST /sleep?level=1
                record(a.events, "sleep")
            elif self.path == "/wake_up":
                record(a.events, "wake")
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    if a.ready_line:
        def announce():
            time.sleep(a.health_delay)
            print("some output before", flush=True)
            print(a.ready_line, flush=True)
        threading.Thread(target=announce, daemon=True).start()
    if a.port:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
        server.serve_forever()
    else:
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
