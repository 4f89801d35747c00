#!/usr/bin/python3
"""A Prometheus HTTP API that misbehaves on purpose, for integration tests (stdlib only).

Serves GET/POST /<mode>/api/v1/query, so one server gives each source of a controller config
its own failure: the source url http://127.0.0.1:P/<mode> names the mode. Answers follow the
shape of Prometheus's instant-query API (tests/monitor/testdata/promql_vector_*.json): an
instant vector of two series (pods w-MODE-0 and w-MODE-1) stamped with the current time.

Modes:
  low        two series of 1 (a valid answer that allows a scale-down: the test's control)
  http500    HTTP 500 with a Prometheus error body (errorType internal)
  badjson    HTTP 200 with a JSON document cut off half-way
  nan        two series whose values are "NaN"
  inf        two series whose values are "+Inf"
  vanish     two series of 10 for --vanish-after seconds after its first query, then an
             empty vector (the metric disappeared)
  huge       HTTP 200 with a --huge-bytes body (a valid start, then padding)
  endless    HTTP 200 with a Content-Length it never reaches: a byte every 0.2 s until the
             client hangs up (at most --endless-max seconds)
Any other path is 404. Prints "listening port=P" once bound (stdout, flushed). Exits 0 on
SIGTERM or SIGINT.
"""

import argparse
import http.server
import json
import signal
import sys
import threading
import time

MODES = ("low", "http500", "badjson", "nan", "inf", "vanish", "huge", "endless")


def vector(value, mode):
    # One series per replica of workload w-MODE, named as the local engine names them (w-MODE-0,
    # w-MODE-1): aiscale ignores series of pods that are not among the engine's replicas.
    now = round(time.time(), 3)
    pods = ("w-%s-0" % mode, "w-%s-1" % mode)
    result = [{"metric": {"pod": pod}, "value": [now, value]} for pod in pods]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    cfg = None
    first_seen = {}
    lock = threading.Lock()

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self.answer()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.answer()

    def send(self, code, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer(self):
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        if len(parts) != 4 or parts[0] not in MODES or parts[1:] != ["api", "v1", "query"]:
            self.send(404, "404 page not found\n", "text/plain")
            return
        mode = parts[0]
        with self.lock:
            first = self.first_seen.setdefault(mode, time.time())
        print("query mode=%s" % mode, flush=True)
        if mode == "low":
            self.send(200, json.dumps(vector("1", mode)))
        elif mode == "http500":
            self.send(500, json.dumps({"status": "error", "errorType": "internal",
                                       "error": "injected internal error"}))
        elif mode == "badjson":
            self.send(200, json.dumps(vector("3", mode))[:40])
        elif mode == "nan":
            self.send(200, json.dumps(vector("NaN", mode)))
        elif mode == "inf":
            self.send(200, json.dumps(vector("+Inf", mode)))
        elif mode == "vanish":
            if time.time() - first < self.cfg.vanish_after:
                self.send(200, json.dumps(vector("10", mode)))
            else:
                body = {"status": "success", "data": {"resultType": "vector", "result": []}}
                self.send(200, json.dumps(body))
        elif mode == "huge":
            head = json.dumps(vector("1", mode))[:-2]
            pad = ', "padding": "' + "x" * self.cfg.huge_bytes + '"}}'
            self.send(200, head + pad)
        else:
            self.endless()

    def endless(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(1 << 30))
        self.end_headers()
        self.wfile.write(b'{"status":"success","data":{"resultType":"vector","result":[')
        deadline = time.time() + self.cfg.endless_max
        try:
            while time.time() < deadline:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass  # the client gave up, as it should
        self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # A deep backlog: a daemon's first round opens one connection per source at once, and a
    # dropped SYN would read as a 1 s timeout.
    request_queue_size = 128

    def handle_error(self, request, client_address):
        # A client that hangs up on a huge or endless body is the point, not an error.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, required=True, help="0 picks a free port (printed)")
    p.add_argument("--vanish-after", type=float, default=3.0)
    p.add_argument("--huge-bytes", type=int, default=4 << 20)
    p.add_argument("--endless-max", type=float, default=120.0)
    args = p.parse_args()
    Handler.cfg = args
    server = Server(("127.0.0.1", args.port), Handler)

    def stop(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("listening port=%d" % server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
