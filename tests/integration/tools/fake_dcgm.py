#!/usr/bin/python3
"""A stand-in for NVIDIA dcgm-exporter, for integration tests (Python 3 stdlib only).

Exports, for --gpus N devices, the fields of dcgm-exporter's default counters CSV that an
autoscaler reads, with its HELP texts, types and label set (gpu, UUID, pci_bus_id, device,
modelName, Hostname, DCGM_FI_DRIVER_VERSION; container/namespace/pod once set for a GPU):
  DCGM_FI_DEV_GPU_UTIL (%), DCGM_FI_DEV_FB_USED / DCGM_FI_DEV_FB_FREE (MiB),
  DCGM_FI_DEV_POWER_USAGE (W), DCGM_FI_PROF_SM_ACTIVE and DCGM_FI_PROF_GR_ENGINE_ACTIVE (ratio).

A test moves the values at run time:
  POST /set?gpu=0&util=80[&fb_used=MiB][&power=W][&sm_active=R][&gr_engine_active=R]
            [&pod=..&namespace=..&container=..]     (no gpu= sets every GPU)
  or a JSON file given by --state-file, reread whenever its mtime changes:
    {"all": {"util": 50}, "gpus": {"1": {"util": 90, "fb_used": 40000}}}
Fields not given explicitly follow util: power from idle to TDP, SM/GR activity as ratios.
GET /state returns the current values as JSON. Prints "listening port=P" and "ready" on stdout.
Exits 0 on SIGTERM or SIGINT.
"""

import argparse
import http.server
import json
import os
import signal
import sys
import threading
import urllib.parse
import uuid

# (field, type, HELP) as in dcgm-exporter's etc/default-counters.csv and dcp-metrics-included.csv.
FIELDS = [
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
]
SETTABLE = {"util", "fb_used", "power", "sm_active", "gr_engine_active"}
K8S_LABELS = ("container", "namespace", "pod")
IDLE_POWER_W = 70.0
RESERVED_MIB = 527  # the driver's reservation: used + free = total - reserved on real devices


def log(msg):
    print(msg, flush=True)


def escape_label(v):
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Gpus:
    """Per-GPU state; thread-safe."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.gpus = [{"util": 0.0, "k8s": {}} for _ in range(args.gpus)]
        self.state_mtime = None

    def apply(self, gpu, values):
        """Sets values on one GPU (None: all). Raises ValueError on a bad key, value or index."""
        targets = range(len(self.gpus)) if gpu is None else [int(gpu)]
        for i in targets:
            if i < 0 or i >= len(self.gpus):
                raise ValueError("no gpu %s (have %d)" % (i, len(self.gpus)))
        for key, value in values.items():
            if key not in SETTABLE and key not in K8S_LABELS:
                raise ValueError("unknown field %r" % key)
            if key in SETTABLE:
                float(value)
        with self.lock:
            for i in targets:
                for key, value in values.items():
                    if key in K8S_LABELS:
                        self.gpus[i]["k8s"][key] = str(value)
                    else:
                        self.gpus[i][key] = float(value)

    def reload_state_file(self):
        path = self.args.state_file
        if not path:
            return
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            return
        if mtime == self.state_mtime:
            return
        self.state_mtime = mtime
        try:
            with open(path) as f:
                doc = json.load(f)
            if "all" in doc:
                self.apply(None, doc["all"])
            for gpu, values in (doc.get("gpus") or {}).items():
                self.apply(gpu, values)
        except (OSError, ValueError, AttributeError, TypeError) as e:
            sys.stderr.write("fake_dcgm: ignoring state file %s: %s\n" % (path, e))

    def values(self, i):
        """The exported field values of GPU i, derived from util where not set."""
        g = self.gpus[i]
        util = max(0.0, min(100.0, g["util"]))
        total = self.args.fb_total
        used = g.get("fb_used", 1 + util / 100.0 * 0.9 * (total - RESERVED_MIB))
        used = max(0.0, min(used, total - RESERVED_MIB))
        return {
            "DCGM_FI_DEV_GPU_UTIL": "%d" % round(util),
            "DCGM_FI_DEV_FB_USED": "%d" % round(used),
            "DCGM_FI_DEV_FB_FREE": "%d" % round(total - RESERVED_MIB - used),
            "DCGM_FI_DEV_POWER_USAGE": "%.3f" % g.get(
                "power", IDLE_POWER_W + util / 100.0 * (self.args.tdp - IDLE_POWER_W)),
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "%.6f" % g.get("gr_engine_active", util / 100.0),
            "DCGM_FI_PROF_SM_ACTIVE": "%.6f" % g.get("sm_active", util / 100.0 * 0.9),
        }

    def labels(self, i):
        a = self.args
        uid = uuid.uuid5(uuid.NAMESPACE_DNS, "%s/gpu%d" % (a.hostname, i))
        labels = [("gpu", str(i)), ("UUID", "GPU-%s" % uid), ("pci_bus_id",
                                                              "00000000:%02X:00.0" % (0x18 + i)),
                  ("device", "nvidia%d" % i), ("modelName", a.model_name),
                  ("Hostname", a.hostname), ("DCGM_FI_DRIVER_VERSION", a.driver_version)]
        k8s = self.gpus[i]["k8s"]
        if any(k8s.values()):
            labels += [(k, k8s.get(k, "")) for k in K8S_LABELS]
        return ",".join('%s="%s"' % (k, escape_label(v)) for k, v in labels)

    def metrics_text(self):
        self.reload_state_file()
        out = []
        with self.lock:
            rows = [(self.labels(i), self.values(i)) for i in range(len(self.gpus))]
        for name, mtype, help_text in FIELDS:
            out.append("# HELP %s %s" % (name, help_text))
            out.append("# TYPE %s %s" % (name, mtype))
            for labels, values in rows:
                out.append("%s{%s} %s" % (name, labels, values[name]))
        return "\n".join(out) + "\n"

    def state(self):
        self.reload_state_file()
        with self.lock:
            return {"hostname": self.args.hostname, "gpus": [
                dict(self.values(i), k8s=dict(self.gpus[i]["k8s"])) for i in range(len(self.gpus))]}


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "fake-dcgm-exporter/0.1"

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (its timeout, or a shutdown): nobody to answer

    def log_message(self, fmt, *a):
        pass

    def reply(self, code, body, ctype="application/json"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        gpus = self.server.gpus
        path = urllib.parse.urlsplit(self.path).path
        if path == "/metrics":
            return self.reply(200, gpus.metrics_text(), "text/plain; version=0.0.4; charset=utf-8")
        if path == "/state":
            return self.reply(200, json.dumps(gpus.state()))
        if path == "/health":
            return self.reply(200, "OK", "text/plain")
        self.reply(404, json.dumps({"error": "not found: " + path}))

    def do_POST(self):
        gpus = self.server.gpus
        url = urllib.parse.urlsplit(self.path)
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        if url.path != "/set":
            return self.reply(404, json.dumps({"error": "not found: " + url.path}))
        query = dict(urllib.parse.parse_qsl(url.query))
        gpu = query.pop("gpu", None)
        try:
            gpus.apply(gpu, query)
        except ValueError as e:
            return self.reply(400, json.dumps({"error": str(e)}))
        self.reply(200, json.dumps(gpus.state()))


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops connections in a burst of load


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, required=True, help="0 picks a free port (printed)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--gpus", type=int, default=1)
    p.add_argument("--hostname", default="fake-gpu-node")
    p.add_argument("--model-name", default="NVIDIA H100 80GB HBM3")
    p.add_argument("--driver-version", default="550.90.07")
    p.add_argument("--fb-total", type=float, default=81559.0, help="framebuffer MiB per GPU")
    p.add_argument("--tdp", type=float, default=700.0, help="power at 100%% utilisation (W)")
    p.add_argument("--util", type=float, default=0.0, help="initial utilisation of every GPU")
    p.add_argument("--state-file", help="JSON file reread when it changes")
    args = p.parse_args(argv)
    if args.gpus < 1 or args.fb_total <= RESERVED_MIB:
        p.error("--gpus must be >= 1 and --fb-total > %d" % RESERVED_MIB)
    return args


def main(argv):
    args = parse_args(argv)
    gpus = Gpus(args)
    gpus.apply(None, {"util": args.util})
    server = Server((args.host, args.port), Handler)
    server.gpus = gpus
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                     daemon=True).start()
    log("listening port=%d gpus=%d" % (server.server_address[1], args.gpus))
    log("ready")
    while not stop.wait(0.2):
        pass
    server.shutdown()
    server.server_close()
    log("exit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
