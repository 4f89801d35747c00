#!/usr/bin/python3
"""An HTTP server that refuses every request and echoes its credentials back (stdlib only).

For tests/integration/secret_leak.sh: the worst server a client can meet. Every request gets
HTTP 401 with the request's Authorization header quoted in the body and in a response header,
shaped as the caller expects an error to look:
  /prom/...  a Prometheus HTTP API error ({"status":"error","errorType":"unauthorized",...})
  other      a Kubernetes API Status ({"kind":"Status","reason":"Unauthorized","code":401,...})
Each Authorization header received is appended, one per line, to --seen FILE, so the test can
show that the secret really reached the client's request code. Nothing is logged per request.
Prints "listening port=P" once bound (stdout, flushed). Exits 0 on SIGTERM or SIGINT.
"""

import argparse
import http.server
import json
import signal
import sys
import threading


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seen", required=True)
    args = ap.parse_args()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):  # the server's own log would hold the secret
            pass

        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            auth = self.headers.get("Authorization", "")
            with lock, open(args.seen, "a") as f:
                f.write(auth + "\n")
            said = "credentials " + json.dumps(auth) + " rejected"
            if self.path.startswith("/prom"):
                doc = {"status": "error", "errorType": "unauthorized", "error": said}
            else:
                doc = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                       "status": "Failure", "message": said, "reason": "Unauthorized",
                       "code": 401}
            body = json.dumps(doc).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("WWW-Authenticate", 'Bearer realm="' + auth.replace('"', "") + '"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = answer
        do_POST = answer
        do_PUT = answer
        do_PATCH = answer

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True

    def stop(*_):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening port={args.port}", flush=True)
    srv.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
