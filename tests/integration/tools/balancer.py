#!/usr/bin/python3
"""A round-robin HTTP proxy over replicas that come and go, for integration tests (stdlib only).

  python3 balancer.py --port P --backends-file F [--health-path /health] [--timeout 60]

F holds one host:port per line ('#' comments and blank lines ignored); it is reread every
--refresh seconds (0.5 by default), so a test, or an actuator's endpoint list, can add and remove
replicas while load runs. A backend is live when it is listed and its --health-path answered
200 at the last check (checked every --refresh seconds; --health-path '' trusts every listed
backend). Each request goes to the next live backend in turn; when the connection to it fails
before anything was sent back, the next one is tried, so a replica that just went away costs no
request. With no live backend the answer is 503 at once.

GET /_balancer/stats returns JSON (live backends, requests per backend, errors); nothing else
under /_balancer/ is forwarded. Prints "listening port=P" and "ready" on stdout. Exits 0 on
SIGTERM or SIGINT.
"""

import argparse
import collections
import http.client
import http.server
import json
import signal
import sys
import threading
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
              "trailers", "transfer-encoding", "upgrade", "host", "content-length"}


def log(msg):
    print(msg, flush=True)


def read_backends(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line and line not in out:
            out.append(line)
    return out


class Pool:
    """The backend list and round-robin cursor; thread-safe."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.listed = []
        self.live = []
        self.cursor = 0
        self.sent = collections.Counter()
        self.errors = collections.Counter()
        self.no_backend = 0

    def healthy(self, backend):
        if not self.args.health_path:
            return True
        host, _, port = backend.rpartition(":")
        try:
            conn = http.client.HTTPConnection(host, int(port), timeout=self.args.health_timeout)
            conn.request("GET", self.args.health_path)
            ok = conn.getresponse().status == 200
            conn.close()
            return ok
        except (OSError, ValueError, http.client.HTTPException):
            return False

    def refresh(self):
        listed = read_backends(self.args.backends_file)
        live = [b for b in listed if self.healthy(b)]
        with self.lock:
            if live != self.live:
                log("backends live=%s" % (",".join(live) or "-"))
            self.listed, self.live = listed, live

    def order(self):
        """Live backends starting at the next in turn (the cursor advances by one)."""
        with self.lock:
            live = list(self.live)
            if not live:
                self.no_backend += 1
                return []
            start = self.cursor % len(live)
            self.cursor += 1
        return live[start:] + live[:start]

    def record(self, backend, ok):
        with self.lock:
            (self.sent if ok else self.errors)[backend] += 1

    def stats(self):
        with self.lock:
            return {"listed": self.listed, "live": self.live, "sent": dict(self.sent),
                    "errors": dict(self.errors), "no_backend": self.no_backend}


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "itest-balancer/0.1"

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (its timeout, or a shutdown): nobody to answer

    def log_message(self, fmt, *a):
        pass

    def reply(self, code, body, headers=(), ctype="application/json"):
        data = body if isinstance(body, bytes) else body.encode()
        self.send_response(code)
        sent_type = False
        for k, v in headers:
            if k.lower() in HOP_BY_HOP:
                continue
            sent_type = sent_type or k.lower() == "content-type"
            self.send_header(k, v)
        if not sent_type:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def forward(self):
        pool = self.server.pool
        if urllib.parse.urlsplit(self.path).path.startswith("/_balancer/"):
            return self.answer(200, json.dumps(pool.stats()))
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        for backend in pool.order():
            host, _, port = backend.rpartition(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=self.server.args.timeout)
            try:
                conn.connect()
            except OSError:
                pool.record(backend, False)
                continue  # nothing was sent: safe to try the next replica
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException) as e:
                pool.record(backend, False)
                return self.answer(502, json.dumps({"error": "backend %s: %s" % (backend, e)}))
            finally:
                conn.close()
            pool.record(backend, True)
            return self.answer(resp.status, data, resp.getheaders())
        self.answer(503, json.dumps({"error": "no live backend"}))

    def answer(self, *args):
        try:
            self.reply(*args)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): nobody to tell

    do_GET = forward
    do_POST = forward
    do_PUT = forward
    do_DELETE = forward
    do_HEAD = forward


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops connections in a burst of load


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, required=True, help="0 picks a free port (printed)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--backends-file", required=True)
    p.add_argument("--refresh", type=float, default=0.5, help="seconds between rereads")
    p.add_argument("--health-path", default="/health", help="'' disables health checks")
    p.add_argument("--health-timeout", type=float, default=0.3)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per forwarded request")
    args = p.parse_args(argv)
    if args.refresh <= 0 or args.timeout <= 0:
        p.error("--refresh and --timeout must be > 0")
    return args


def main(argv):
    args = parse_args(argv)
    pool = Pool(args)
    pool.refresh()
    server = Server((args.host, args.port), Handler)
    server.pool = pool
    server.args = args
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def refresher():
        while not stop.wait(args.refresh):
            pool.refresh()

    threading.Thread(target=refresher, daemon=True).start()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                     daemon=True).start()
    log("listening port=%d" % server.server_address[1])
    log("ready")
    while not stop.wait(0.2):
        pass
    server.shutdown()
    server.server_close()
    log("exit %s" % json.dumps(pool.stats()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
