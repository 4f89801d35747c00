#!/usr/bin/python3
"""A stand-in for one vLLM replica, for integration tests (Python 3 stdlib only).

Serves OpenAI-style completions in a fixed --delay each, at most --max-concurrency at once; the
rest wait in a FIFO queue. /metrics exports the metric names, types, label names and histogram
bucket bounds of vLLM's Prometheus logger (vllm/v1/metrics/loggers.py), so a scraper or a real
Prometheus sees what it would see from vLLM. Not a model: the text it returns is canned.

Endpoints:
  POST /v1/completions, GET /generate   serve one request (503 before ready, or while draining)
  GET  /health                          200 once --ready-after seconds have passed, else 503
  POST /prestop                         records the call (log line), 200
  POST /sleep?level=1, POST /wake_up     vLLM's sleep mode (only with --enable-sleep-mode, as
                                        vLLM serves them only with VLLM_SERVER_DEV_MODE=1):
                                        asleep, completions are refused (503) and in-flight ones
                                        finish; a wake answers after --wake-s
  GET  /is_sleeping                     {"is_sleeping": bool}
  GET  /metrics                         Prometheus text format 0.0.4
  GET  /v1/models                       the served model
  GET  /stats                           JSON: counters for test assertions (not a vLLM endpoint)

Prints "listening port=P replica=N" once bound and "ready" when /health turns 200 (both on
stdout, flushed). On SIGTERM or SIGINT it stops accepting, lets in-flight and queued requests
finish for up to --drain seconds, and exits 0.
"""

import argparse
import collections
import http.server
import json
import signal
import sys
import threading
import time
import urllib.parse

# Bucket bounds as vLLM declares them (vllm/v1/metrics/loggers.py).
TTFT_BUCKETS = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0
]
REQUEST_LATENCY_BUCKETS = [
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
    240.0, 480.0, 960.0, 1920.0, 7680.0
]
FINISHED_REASONS = ("stop", "length", "abort")


def log(msg):
    print(msg, flush=True)


def fmt_float(v):
    """Formats a value the way prometheus_client does (Go's float formatting)."""
    if v == float("inf"):
        return "+Inf"
    if v == float("-inf"):
        return "-Inf"
    if v != v:
        return "NaN"
    return repr(float(v))


def escape_label(v):
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def label_str(labels):
    return ",".join('%s="%s"' % (k, escape_label(v)) for k, v in labels)


class Histogram:
    """Cumulative buckets, sum and count; callers hold the engine lock."""

    def __init__(self, bounds):
        self.bounds = list(bounds)
        self.counts = [0] * len(self.bounds)
        self.total = 0
        self.sum = 0.0

    def observe(self, v):
        for i, b in enumerate(self.bounds):
            if v <= b:
                self.counts[i] += 1
        self.total += 1
        self.sum += v

    def render(self, name, labels, out):
        for b, c in zip(self.bounds, self.counts):
            out.append("%s_bucket{%s} %s" %
                       (name, label_str(labels + [("le", fmt_float(b))]), fmt_float(c)))
        out.append("%s_bucket{%s} %s" %
                   (name, label_str(labels + [("le", "+Inf")]), fmt_float(self.total)))
        out.append("%s_count{%s} %s" % (name, label_str(labels), fmt_float(self.total)))
        out.append("%s_sum{%s} %s" % (name, label_str(labels), fmt_float(self.sum)))


class Engine:
    """The scheduler: FIFO admission to at most max_concurrency slots. Thread-safe."""

    def __init__(self, args):
        self.args = args
        self.cv = threading.Condition()
        self.queue = collections.deque()  # tickets, oldest first
        self.running = 0
        self.active = 0  # requests between admission and their reply being written
        self.next_ticket = 0
        self.success = collections.Counter()
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.prestop_calls = 0
        self.sleep_calls = 0
        self.wake_calls = 0
        self.rejected = 0
        self.ttft = Histogram(TTFT_BUCKETS)
        self.e2e = Histogram(REQUEST_LATENCY_BUCKETS)
        self.queue_time = Histogram(REQUEST_LATENCY_BUCKETS)

    def serve(self, prompt_tokens, max_tokens):
        """Blocks for queueing plus --delay; returns (queued_s, e2e_s)."""
        arrived = time.monotonic()
        with self.cv:
            ticket = self.next_ticket
            self.next_ticket += 1
            self.queue.append(ticket)
            while self.queue[0] != ticket or self.running >= self.args.max_concurrency:
                self.cv.wait()
            self.queue.popleft()
            self.running += 1
            self.cv.notify_all()
        started = time.monotonic()
        time.sleep(self.args.delay)
        finished = time.monotonic()
        with self.cv:
            self.running -= 1
            queued = started - arrived
            self.queue_time.observe(queued)
            # The first token comes after the prefill, taken here as a tenth of the service time.
            self.ttft.observe(queued + self.args.delay * 0.1)
            self.e2e.observe(finished - arrived)
            self.success["stop"] += 1
            self.prompt_tokens += prompt_tokens
            self.generation_tokens += max_tokens
            self.cv.notify_all()
        return queued, finished - arrived

    def begin(self):
        with self.cv:
            self.active += 1

    def end(self):
        with self.cv:
            self.active -= 1
            self.cv.notify_all()

    def in_flight(self):
        with self.cv:
            return self.active

    def wait_idle(self, timeout):
        deadline = time.monotonic() + timeout
        with self.cv:
            while self.active > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cv.wait(left)
        return True

    def metrics_text(self):
        base = [("model_name", self.args.model), ("engine", "0")]
        out = []

        def family(name, mtype, help_text):
            out.append("# HELP %s %s" % (name, help_text))
            out.append("# TYPE %s %s" % (name, mtype))

        with self.cv:
            running, waiting = self.running, len(self.queue)
            # KV-cache use grows with the batch; waiting requests hold none.
            kv = min(1.0, running / float(self.args.max_concurrency))
            family("vllm:num_requests_running", "gauge",
                   "Number of requests in model execution batches.")
            out.append("vllm:num_requests_running{%s} %s" % (label_str(base), fmt_float(running)))
            family("vllm:num_requests_waiting", "gauge",
                   "Number of requests waiting to be processed.")
            out.append("vllm:num_requests_waiting{%s} %s" % (label_str(base), fmt_float(waiting)))
            family("vllm:gpu_cache_usage_perc", "gauge",
                   "GPU KV-cache usage. 1 means 100 percent usage."
                   "DEPRECATED: Use vllm:kv_cache_usage_perc instead.")
            out.append("vllm:gpu_cache_usage_perc{%s} %s" % (label_str(base), fmt_float(kv)))
            family("vllm:kv_cache_usage_perc", "gauge",
                   "KV-cache usage. 1 means 100 percent usage.")
            out.append("vllm:kv_cache_usage_perc{%s} %s" % (label_str(base), fmt_float(kv)))
            family("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.")
            out.append("vllm:prompt_tokens_total{%s} %s" %
                       (label_str(base), fmt_float(self.prompt_tokens)))
            family("vllm:generation_tokens_total", "counter",
                   "Number of generation tokens processed.")
            out.append("vllm:generation_tokens_total{%s} %s" %
                       (label_str(base), fmt_float(self.generation_tokens)))
            family("vllm:request_success_total", "counter",
                   "Count of successfully processed requests.")
            for reason in FINISHED_REASONS:
                out.append("vllm:request_success_total{%s} %s" % (label_str(
                    base + [("finished_reason", reason)]), fmt_float(self.success[reason])))
            family("vllm:time_to_first_token_seconds", "histogram",
                   "Histogram of time to first token in seconds.")
            self.ttft.render("vllm:time_to_first_token_seconds", base, out)
            family("vllm:e2e_request_latency_seconds", "histogram",
                   "Histogram of e2e request latency in seconds.")
            self.e2e.render("vllm:e2e_request_latency_seconds", base, out)
            family("vllm:request_queue_time_seconds", "histogram",
                   "Histogram of time spent in WAITING phase for request.")
            self.queue_time.render("vllm:request_queue_time_seconds", base, out)
        return "\n".join(out) + "\n"


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "fake-vllm/0.1"

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (its timeout, or a shutdown): nobody to answer

    def log_message(self, fmt, *a):  # the default writes every request to stderr
        if self.server.app.args.verbose:
            sys.stderr.write("replica %d: %s\n" % (self.server.app.args.replica, fmt % a))

    def reply(self, code, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def reply_json(self, code, obj):
        self.reply(code, json.dumps(obj))

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def do_GET(self):
        app = self.server.app
        path = urllib.parse.urlsplit(self.path).path
        if path == "/health":
            ok = app.ready.is_set() and not app.draining.is_set()
            return self.reply(200 if ok else 503, "" if ok else "not ready", "text/plain")
        if path == "/metrics":
            return self.reply(200, app.engine.metrics_text(), "text/plain; version=0.0.4")
        if path == "/generate":
            return self.complete({})
        if path == "/v1/models":
            return self.reply_json(200, {"object": "list", "data": [
                {"id": app.args.model, "object": "model", "owned_by": "vllm"}]})
        if path == "/stats":
            return self.reply_json(200, app.stats())
        if path == "/is_sleeping" and app.args.enable_sleep_mode:
            return self.reply_json(200, {"is_sleeping": app.sleeping.is_set()})
        self.reply_json(404, {"error": "not found: " + path})

    def sleep_or_wake(self, path):
        app = self.server.app
        if path == "/sleep":
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            level = query.get("level", ["1"])[0]
            if level not in ("1", "2"):
                return self.reply_json(400, {"error": "level must be 1 or 2"})
            app.sleeping.set()
            with app.engine.cv:
                app.engine.sleep_calls += 1
            log("sleep replica=%d level=%s" % (app.args.replica, level))
            return self.reply(200, "", "text/plain")
        # Waking reloads the weights from host memory: it answers once the replica serves.
        time.sleep(app.args.wake_s)
        app.sleeping.clear()
        with app.engine.cv:
            app.engine.wake_calls += 1
        log("wake_up replica=%d" % app.args.replica)
        return self.reply(200, "", "text/plain")

    def do_POST(self):
        app = self.server.app
        path = urllib.parse.urlsplit(self.path).path
        body = self.read_body()
        if path == "/v1/completions":
            try:
                req = json.loads(body or b"{}")
                if not isinstance(req, dict):
                    raise ValueError("body is not a JSON object")
            except ValueError as e:
                return self.reply_json(400, {"error": "bad request: %s" % e})
            return self.complete(req)
        if path == "/prestop":
            with app.engine.cv:
                app.engine.prestop_calls += 1
            log("prestop called replica=%d in_flight=%d" %
                (app.args.replica, app.engine.in_flight()))
            return self.reply_json(200, {"ok": True})
        if path in ("/sleep", "/wake_up") and app.args.enable_sleep_mode:
            return self.sleep_or_wake(path)
        self.reply_json(404, {"error": "not found: " + path})

    def complete(self, req):
        app = self.server.app
        try:
            max_tokens = int(req.get("max_tokens") or 16)
        except (TypeError, ValueError):
            return self.reply_json(400, {"error": "bad request: max_tokens"})
        prompt = str(req.get("prompt") or "")
        prompt_tokens = max(1, len(prompt.split()))
        # Counted before the drain check, so a drain either waits for this request or refuses it.
        app.engine.begin()
        try:
            if not app.ready.is_set() or app.draining.is_set() or app.sleeping.is_set():
                with app.engine.cv:
                    app.engine.rejected += 1
                return self.reply_json(503, {"error": "asleep" if app.sleeping.is_set()
                                             else "not ready"})
            queued, e2e = app.engine.serve(prompt_tokens, max_tokens)
            self.reply_json(200, self.completion(prompt_tokens, max_tokens, queued, e2e))
        finally:
            app.engine.end()

    def completion(self, prompt_tokens, max_tokens, queued, e2e):
        app = self.server.app
        return {
            "id": "cmpl-%d-%d" % (app.args.replica, int(time.time() * 1e6)),
            "object": "text_completion",
            "created": int(time.time()),
            "model": app.args.model,
            "choices": [{"index": 0, "text": " ok", "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": max_tokens,
                      "total_tokens": prompt_tokens + max_tokens},
            "replica": app.args.replica,
            "queued_s": round(queued, 4),
            "e2e_s": round(e2e, 4),
        }


class App:
    def __init__(self, args):
        self.args = args
        self.engine = Engine(args)
        self.ready = threading.Event()
        self.draining = threading.Event()
        self.sleeping = threading.Event()
        self.stop = threading.Event()

    def stats(self):
        e = self.engine
        with e.cv:
            return {"replica": self.args.replica, "running": e.running, "waiting": len(e.queue),
                    "served": sum(e.success.values()), "rejected": e.rejected,
                    "prestop_calls": e.prestop_calls, "ready": self.ready.is_set(),
                    "sleeping": self.sleeping.is_set(), "sleep_calls": e.sleep_calls,
                    "wake_calls": e.wake_calls,
                    "draining": self.draining.is_set()}


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops connections in a burst of load


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, required=True, help="0 picks a free port (printed)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--replica", type=int, default=0)
    p.add_argument("--delay", type=float, default=0.5, help="seconds to serve one request")
    p.add_argument("--max-concurrency", type=int, default=2)
    p.add_argument("--ready-after", type=float, default=1.0)
    p.add_argument("--model", default="fake/tiny-model")
    p.add_argument("--drain", type=float, default=2.0, help="seconds to finish in-flight work")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    p.add_argument("--enable-sleep-mode", action="store_true",
                   help="serve /sleep, /wake_up and /is_sleeping (vLLM's sleep mode)")
    p.add_argument("--wake-s", type=float, default=0.2, help="seconds a wake_up takes")
    args = p.parse_args(argv)
    if (args.max_concurrency < 1 or args.delay < 0 or args.ready_after < 0 or args.drain < 0
            or args.wake_s < 0):
        p.error("--max-concurrency must be >= 1; --delay, --ready-after, --drain, --wake-s >= 0")
    return args


def main(argv):
    args = parse_args(argv)
    app = App(args)
    server = Server((args.host, args.port), Handler)
    server.app = app
    log("listening port=%d replica=%d" % (server.server_address[1], args.replica))

    def on_signal(signum, _frame):
        app.stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def become_ready():
        if not app.stop.wait(args.ready_after):
            app.ready.set()
            log("ready")

    threading.Thread(target=become_ready, daemon=True).start()
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                               daemon=True)
    serving.start()
    while not app.stop.wait(0.2):
        pass
    app.draining.set()
    in_flight = app.engine.in_flight()
    log("sigterm replica=%d draining in_flight=%d" % (args.replica, in_flight))
    server.shutdown()
    server.server_close()
    drained = app.engine.wait_idle(args.drain)
    log("exit replica=%d drained=%s served=%d" %
        (args.replica, "yes" if drained else "no", app.stats()["served"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
