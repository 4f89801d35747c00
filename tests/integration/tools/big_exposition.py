#!/usr/bin/python3
"""An exposition endpoint with very many series of one metric (Python 3 stdlib only).

GET /metrics serves --series gauges `app_queue_depth{shard="sN",zone="zK"}` (no pod-like label:
the scraper must tell them apart by the labels that differ), built once at start. With
--bytes-per-second the body is sent that slowly (a target whose scrape is in flight for long).
Prints "listening port=P" (flushed) once bound; exits 0 on SIGTERM or SIGINT.
"""

import argparse
import http.server
import signal
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--series", type=int, default=200000)
    ap.add_argument("--bytes-per-second", type=int, default=0)
    a = ap.parse_args()
    lines = ["# TYPE app_queue_depth gauge"]
    for i in range(a.series):
        lines.append('app_queue_depth{shard="s%d",zone="z%d"} %d' % (i, i % 7, i % 100))
    body = ("\n".join(lines) + "\n").encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if self.path != "/metrics":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                if a.bytes_per_second <= 0:
                    self.wfile.write(body)
                    return
                step = max(1, a.bytes_per_second // 10)
                for off in range(0, len(body), step):
                    self.wfile.write(body[off:off + step])
                    time.sleep(0.1)
            except OSError:
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("listening port=%d" % server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
