#!/usr/bin/python3
"""An elastic data-parallel training job that speaks aiscale's training contract.

Launched by torchrun (examples/elastic/torchrun.py on Debian's Python 3.11) with
--nnodes=MIN:MAX --rdzv-backend=c10d; CPU only (gloo), one thread per worker. Every epoch has
three real phases: load (reads and preprocesses its shards: IO-bound, as long at any world
size), compute (DDP training steps of a small MLP on synthetic data) and eval (forward passes,
split across the ranks). docs/training-engine-contract.md is the contract; in short:

- rank 0 serves http://127.0.0.1:<metrics-port>/metrics (Prometheus text 0.0.4) with the
  aiscale_training_* metrics, GET /checkpoint (the last durable checkpoint, JSON) and
  POST /checkpoint (checkpoint now at the next step boundary; answers 200 with the checkpoint's
  step once it is durable, then training holds for --hold-s so no step is lost to the stop that
  follows; 503 when it cannot within ?timeout= seconds);
- checkpoints are atomic (write <dir>/ckpt.pt.tmp, fsync, rename to <dir>/ckpt.pt): every
  --ckpt-every steps, at the end of each epoch, on request, on SIGTERM (torchrun stops the
  workers with SIGTERM at every membership change) and when a collective fails because a peer
  died; each is the state after the last completed step, so a restart resumes at that step;
- every worker prints "aiscale-elastic: worker rank R of W started at step S" once it joined
  a rendezvous (the agent's readiness line for aiscale);
- rank 0 appends one JSON object per line to --events (start, phase, step, ckpt, stop, done),
  which tests read to compute the world size, the resumed step and the samples lost; each
  carries the run's id (`run`: --run-id, else the id kept in <ckpt-dir>/run_id, made at the
  run's first start), so `aiscale calibrate --run ID` reads one run of a log several appended to;
- the job exits 0 only when it finished (every epoch trained): torchrun then ends its agent
  with 0, which aiscale's engines take as the job's completion (restart_policy OnFailure).
"""
import argparse
import datetime
import http.server
import json
import math
import os
import signal
import socketserver
import sys
import threading
import time
import urllib.parse

import torch
import torch.distributed as dist
import torch.nn as nn

PHASES = ("load", "compute", "eval")  # the contract's phase numbers: 0, 1, 2


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--metrics-port", type=int, default=0, help="rank 0's /metrics port; 0: none")
    p.add_argument("--events", default="", help="rank 0 appends JSON lines here")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--epoch-samples", type=int, default=20000, help="training samples per epoch")
    p.add_argument("--batch", type=int, default=64, help="samples per rank per step")
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--load-s", type=float, default=10.0, help="load phase length (any world size)")
    p.add_argument("--eval-batches", type=int, default=40, help="eval forward passes in all")
    p.add_argument("--eval-s", type=float, default=0.0, help="extra eval wait (e.g. metric IO)")
    p.add_argument("--ckpt-every", type=int, default=50, help="steps between periodic checkpoints")
    p.add_argument("--hold-s", type=float, default=20.0, help="hold after a requested checkpoint")
    p.add_argument("--pg-timeout-s", type=float, default=60.0)
    p.add_argument("--run-id", default="", help="the run's id in the events; default: <ckpt-dir>/run_id")
    return p.parse_args(argv)


def run_id(args):
    """The run's id: --run-id, else the one kept in the checkpoint directory (made once, at the
    run's first start, so every restart of the run carries the same id)."""
    if args.run_id:
        return args.run_id
    os.makedirs(args.ckpt_dir, exist_ok=True)
    path = os.path.join(args.ckpt_dir, "run_id")
    try:
        with open(path) as f:
            rid = f.read().strip()
        if rid:
            return rid
    except FileNotFoundError:
        pass
    rid = time.strftime("%Y%m%dT%H%M%S") + "-" + os.urandom(3).hex()
    tmp = path + ".tmp." + str(os.getpid())
    with open(tmp, "w") as f:
        f.write(rid + "\n")
    os.replace(tmp, path)
    return rid


class Events:
    """Rank 0's JSON-lines log; a no-op elsewhere."""

    def __init__(self, path, enabled, run):
        self.f = open(path, "a", buffering=1) if (path and enabled) else None
        self.run = run

    def emit(self, ev, **kw):
        if self.f:
            self.f.write(json.dumps({"ev": ev, "t": round(time.time(), 3), "run": self.run, **kw}) + "\n")


class Shared:
    """What the metrics thread reads and the training loop writes (one lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}
        self.rate_window = []  # (time, samples) in the compute phase, last ~5 s
        self.ckpt = None  # the last durable checkpoint: {"step", "samples", "path", "time"}
        self.request_seq = 0  # POST /checkpoint increments; the loop serves it
        self.served_seq = 0
        self.served = threading.Condition(self.lock)


def exposition(s):
    with s.lock:
        v = dict(s.values)
        w = list(s.rate_window)
    rate = 0.0
    if v.get("phase") == "compute" and len(w) >= 2 and w[-1][0] > w[0][0]:
        rate = (w[-1][1] - w[0][1]) / (w[-1][0] - w[0][0])
    lines = []

    def metric(name, kind, helptext, samples):
        lines.append(f"# HELP {name} {helptext}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            lines.append(f"{name}{labels} {value!r}" if isinstance(value, float) else f"{name}{labels} {value}")

    metric("aiscale_training_samples_per_second", "gauge", "Training samples per second (0 outside compute).", [("", float(rate))])
    metric("aiscale_training_samples_total", "counter", "Samples trained (restored from the checkpoint).", [("", v.get("samples", 0))])
    metric("aiscale_training_steps_total", "counter", "Optimizer steps (restored from the checkpoint).", [("", v.get("step", 0))])
    metric("aiscale_training_phase", "gauge", "1 for the current phase.",
           [(f'{{phase="{p}"}}', 1 if v.get("phase") == p else 0) for p in PHASES])
    metric("aiscale_training_epoch", "gauge", "Completed epochs.", [("", v.get("epoch", 0))])
    metric("aiscale_training_epoch_progress", "gauge", "Fraction of this epoch's samples trained.", [("", float(v.get("epoch_progress", 0.0)))])
    metric("aiscale_training_job_progress", "gauge", "Fraction of all samples trained.", [("", float(v.get("job_progress", 0.0)))])
    metric("aiscale_training_samples_remaining", "gauge", "Samples still to train.", [("", v.get("samples_remaining", 0))])
    metric("aiscale_training_loss", "gauge", "Mean training loss over the last steps.", [("", float(v.get("loss", math.nan)))])
    metric("aiscale_training_world_size", "gauge", "Workers in the current rendezvous.", [("", v.get("world_size", 0))])
    metric("aiscale_training_last_restart_timestamp_seconds", "gauge", "Unix time of the last (re)start.",
           [("", float(v.get("restart_time", 0.0)))])
    return ("\n".join(lines) + "\n").encode()


def make_handler(shared):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, code, body, ctype="application/json"):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            path = urllib.parse.urlparse(self.path).path
            if path == "/metrics":
                self.reply(200, exposition(shared), "text/plain; version=0.0.4")
            elif path == "/health":
                self.reply(200, b"ok\n", "text/plain")
            elif path == "/checkpoint":
                with shared.lock:
                    self.reply(200 if shared.ckpt else 404, json.dumps(shared.ckpt or {"error": "no checkpoint yet"}).encode())
            else:
                self.reply(404, b'{"error": "not found"}')

        def do_POST(self):
            url = urllib.parse.urlparse(self.path)
            if url.path != "/checkpoint":
                self.reply(404, b'{"error": "not found"}')
                return
            try:
                timeout = float(urllib.parse.parse_qs(url.query).get("timeout", ["30"])[0])
            except ValueError:
                timeout = 30.0
            with shared.lock:
                shared.request_seq += 1
                seq = shared.request_seq
                ok = shared.served.wait_for(lambda: shared.served_seq >= seq, timeout=timeout)
                ckpt = dict(shared.ckpt) if (ok and shared.ckpt) else None
            if ckpt:
                self.reply(200, json.dumps(ckpt).encode())
            else:
                self.reply(503, json.dumps({"error": f"no checkpoint within {timeout} s"}).encode())

    return Handler


def serve_metrics(port, shared):
    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        allow_reuse_address = True
        daemon_threads = True

    deadline = time.time() + 15  # the previous rank 0 may still be exiting
    while True:
        try:
            srv = Server(("127.0.0.1", port), make_handler(shared))
            break
        except OSError as e:
            if time.time() > deadline:
                print(f"train.py: cannot serve metrics on 127.0.0.1:{port}: {e}", file=sys.stderr, flush=True)
                return None
            time.sleep(0.2)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class Net(nn.Module):
    def __init__(self, d_in, hidden, classes):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.layers(x)


D_IN, CLASSES = 256, 10


def batch_for(step, rank, n, teacher):
    g = torch.Generator().manual_seed(step * 1009 + rank)
    x = torch.randn(n, D_IN, generator=g)
    return x, (x @ teacher).argmax(dim=1)


class Stop(Exception):
    """All ranks stop at this step boundary; `own`: this rank was sent SIGTERM."""

    def __init__(self, own):
        super().__init__("stop")
        self.own = own


class Job:
    def __init__(self, args):
        self.a = args
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self.events = Events(args.events, self.rank == 0, run_id(args) if self.rank == 0 else "")
        self.shared = Shared()
        self.term = False
        self.total = args.epochs * args.epoch_samples
        self.path = os.path.join(args.ckpt_dir, "ckpt.pt")
        torch.manual_seed(0)
        self.teacher = torch.randn(D_IN, CLASSES, generator=torch.Generator().manual_seed(7))
        self.net = Net(D_IN, args.hidden, CLASSES)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01, momentum=0.9)
        self.st = {"step": 0, "samples": 0, "epoch": 0, "epoch_samples": 0}
        self.losses = []

    # -- state ---------------------------------------------------------------------------------
    def restore(self):
        if not os.path.exists(self.path):
            return False
        ck = torch.load(self.path)
        self.net.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["opt"])
        self.st = dict(ck["state"])
        return True

    def save(self, reason):
        """Rank 0 writes the state after the last completed step, atomically."""
        if self.rank != 0:
            return
        os.makedirs(self.a.ckpt_dir, exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as f:
            torch.save({"model": self.net.state_dict(), "opt": self.opt.state_dict(), "state": dict(self.st)}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        dfd = os.open(self.a.ckpt_dir, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        info = {"step": self.st["step"], "samples": self.st["samples"], "path": self.path, "time": time.time(), "reason": reason}
        with self.shared.lock:
            self.shared.ckpt = info
        self.events.emit("ckpt", step=self.st["step"], samples=self.st["samples"], reason=reason)

    def publish(self, phase=None):
        st = self.st
        with self.shared.lock:
            v = self.shared.values
            if phase is not None:
                v["phase"] = phase
            v.update(step=st["step"], samples=st["samples"], epoch=st["epoch"],
                     epoch_progress=min(1.0, st["epoch_samples"] / self.a.epoch_samples),
                     job_progress=min(1.0, st["samples"] / self.total),
                     samples_remaining=max(0, self.total - st["samples"]),
                     loss=(sum(self.losses) / len(self.losses)) if self.losses else math.nan)
            if v.get("phase") == "compute":
                w = self.shared.rate_window
                w.append((time.time(), st["samples"]))
                while len(w) > 2 and w[0][0] < time.time() - 5:
                    w.pop(0)
            else:
                self.shared.rate_window = []

    def enter(self, phase):
        self.publish(phase)
        self.events.emit("phase", phase=phase, epoch=self.st["epoch"], step=self.st["step"])

    # -- phases --------------------------------------------------------------------------------
    def load(self):
        """Reads and preprocesses the epoch's shards: IO waits dominate (shared storage)."""
        self.enter("load")
        shards = 20
        for i in range(shards):
            time.sleep(self.a.load_s / shards)
            x = torch.randn(64, D_IN, generator=torch.Generator().manual_seed(i))
            _ = (x - x.mean(0)) / (x.std(0) + 1e-6)
            self.control()  # a checkpoint here resumes at this epoch's load

    def control(self):
        """Every rank learns, at the same step boundary, whether rank 0 was asked to checkpoint
        and whether any rank was sent SIGTERM (then all stop at this step, so rank 0's
        checkpoint is the last step anyone completed). Raises when a peer is gone."""
        ctl = torch.tensor([0.0, 1.0 if self.term else 0.0])
        if self.rank == 0:
            with self.shared.lock:
                ctl[0] = 1.0 if self.shared.request_seq > self.shared.served_seq else 0.0
        dist.all_reduce(ctl, op=dist.ReduceOp.MAX)
        if ctl[1] > 0.5:
            raise Stop(self.term)
        if ctl[0] < 0.5:
            return
        seq = self.shared.request_seq
        self.save("request")
        with self.shared.lock:
            self.shared.served_seq = max(self.shared.served_seq, seq)
            self.shared.served.notify_all()
        # Hold: the stop that follows a requested checkpoint must find no newer step. Every
        # rank votes to go on holding; SIGTERM on any rank (or the end of the hold) ends it.
        end = time.time() + self.a.hold_s
        while True:
            time.sleep(0.1)
            keep = self.rank != 0 or time.time() < end
            vote = torch.tensor([1.0 if (keep and not self.term) else 0.0])
            dist.all_reduce(vote, op=dist.ReduceOp.MIN)
            if vote[0] < 0.5:
                break
        # Whoever ended the hold: if it was a SIGTERM, no rank may start another step.
        stop = torch.tensor([1.0 if self.term else 0.0])
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop[0] > 0.5:
            raise Stop(self.term)

    def compute(self, ddp):
        self.enter("compute")
        a, st = self.a, self.st
        loss_fn = nn.CrossEntropyLoss()
        while st["epoch_samples"] < a.epoch_samples:
            self.control()
            x, y = batch_for(st["step"], self.rank, a.batch, self.teacher)
            self.opt.zero_grad()
            loss = loss_fn(ddp(x), y)
            loss.backward()  # gradients all-reduced here; a dead peer raises
            self.opt.step()
            st["step"] += 1
            st["samples"] += a.batch * self.world
            st["epoch_samples"] += a.batch * self.world
            self.losses = (self.losses + [loss.item()])[-20:]
            self.publish()
            self.events.emit("step", step=st["step"], samples=st["samples"], world=self.world)
            if st["step"] % a.ckpt_every == 0:
                self.save("periodic")

    def evaluate(self):
        self.enter("eval")
        mine = range(self.rank, self.a.eval_batches, self.world)
        total = torch.zeros(2)
        with torch.no_grad():
            for i in mine:
                x, y = batch_for(10_000_000 + i, 0, 256, self.teacher)
                total[0] += (self.net(x).argmax(1) == y).sum()
                total[1] += len(y)
        dist.all_reduce(total)
        # The rest of the eval (scoring on one host, metric IO) no world size shortens. Every
        # rank passes the same control points, so requests and SIGTERM are served here too (a
        # checkpoint in eval resumes at this eval).
        # The same number of control points on every rank (a clock test could differ by one).
        ticks = math.ceil(self.a.eval_s / 0.5)
        for _ in range(ticks):
            self.control()
            time.sleep(self.a.eval_s / ticks)
        self.control()
        self.events.emit("eval", epoch=self.st["epoch"], accuracy=float(total[0] / max(1.0, float(total[1]))))

    # -- main ----------------------------------------------------------------------------------
    def run(self):
        resumed = self.restore()
        if self.rank == 0 and self.a.metrics_port:
            serve_metrics(self.a.metrics_port, self.shared)
        now = time.time()
        with self.shared.lock:
            self.shared.values.update(world_size=self.world, restart_time=now)
        self.publish("load")
        self.events.emit("start", world=self.world, resumed=resumed, step=self.st["step"], samples=self.st["samples"],
                         restart_count=int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")))
        # The agent's readiness line (readiness: {log: ...} in aiscale's target): this agent's
        # worker joined a rendezvous and is about to train.
        print(f"aiscale-elastic: worker rank {self.rank} of {self.world} started at step {self.st['step']}", flush=True)
        ddp = nn.parallel.DistributedDataParallel(self.net)
        try:
            while self.st["epoch"] < self.a.epochs:
                if self.st["epoch_samples"] == 0:
                    self.load()
                if self.st["epoch_samples"] < self.a.epoch_samples:
                    self.compute(ddp)
                self.evaluate()
                self.st["epoch"] += 1
                self.st["epoch_samples"] = 0
                self.save("epoch")
        except Stop as s:
            # SIGTERM here: torchrun is restarting the workers (membership change) or the agent
            # is stopping. SIGTERM on a peer: this agent must restart its workers too, so exit
            # non-zero (0 would tell torchrun the job succeeded).
            self.save("term")
            self.events.emit("stop", step=self.st["step"], samples=self.st["samples"],
                             why="SIGTERM" if s.own else "SIGTERM on a peer")
            return 143 if s.own else 1
        except RuntimeError as e:  # a collective failed: a peer (or its agent) is gone
            self.save("peer_failure")
            self.events.emit("stop", step=self.st["step"], samples=self.st["samples"], why=str(e)[:200])
            return 1
        self.enter("eval")
        self.events.emit("done", step=self.st["step"], samples=self.st["samples"])
        return 0


def main():
    args = parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.pg_timeout_s))
    job = Job(args)

    def on_term(signum, frame):
        job.term = True  # acted on at the next step boundary (or when a collective fails)

    signal.signal(signal.SIGTERM, on_term)
    rc = job.run()
    sys.stdout.flush()
    os._exit(rc)  # skip process-group teardown: peers may already be gone


if __name__ == "__main__":
    main()
