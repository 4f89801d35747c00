#!/usr/bin/python3
"""Self-test of the integration tools (model_server, fake_dcgm, balancer, loadgen, prom_query).

Run: /usr/bin/python3 selftest.py [-v]. Starts the servers as real processes on 127.0.0.1 with
port 0 and stops each one by PID (SIGTERM, then SIGKILL) in tearDown. About 10 seconds.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import loadgen  # noqa: E402

PY = sys.executable
SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def http(method, url, body=None, timeout=5.0):
    """(status, body bytes); an HTTP error status is returned, not raised."""
    req = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def parse_exposition(text):
    """Checks text format 0.0.4 strictly enough for these tools; returns
    ({family: type}, [(name, {label: value}, float)]). Raises AssertionError."""
    types, helps, samples = {}, set(), []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helps.add(line.split()[2])
            continue
        if line.startswith("# TYPE "):
            _, _, name, mtype = line.split()
            assert name not in types, "TYPE twice for " + name
            types[name] = mtype
            continue
        m = SAMPLE_RE.match(line)
        assert m, "bad sample line: %r" % line
        labels = {}
        if m.group(3):
            rest = m.group(3)
            for lm in LABEL_RE.finditer(rest):
                labels[lm.group(1)] = lm.group(2)
            assert ",".join('%s="%s"' % kv for kv in labels.items()) == rest, line
        name = m.group(1)
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        family = family if family in types else name
        assert family in types and family in helps, "sample before HELP/TYPE: " + line
        samples.append((name, labels, float(m.group(4))))
    return types, samples


def promtool_check(test, text):
    """Prometheus's own parser must accept the page (promtool exit 1 is a parse error). Its
    lint (exit 3) may only object to what the real exporters do too: vLLM's ':' in metric
    names and dcgm-exporter's camelCase label names (UUID, modelName, Hostname)."""
    if not shutil.which("promtool"):
        return
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
    out = (r.stdout + r.stderr).decode()
    test.assertIn(r.returncode, (0, 3), out)
    for line in out.splitlines():
        test.assertRegex(line, r"should not contain ':'|should be written in 'snake_case'")


class Proc:
    """A tool started as a process; its 'listening port=P' line gives the port."""

    def __init__(self, script, *args):
        self.p = subprocess.Popen([PY, os.path.join(HERE, script), "--port", "0"] + list(args),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.seen = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.port = int(self.wait_line(r"^listening port=(\d+)").group(1))
        self.url = "http://127.0.0.1:%d" % self.port

    def _read(self):
        for line in self.p.stdout:
            with self.seen:
                self.lines.append(line.rstrip("\n"))
                self.seen.notify_all()

    def wait_line(self, regex, timeout=10.0):
        deadline = time.monotonic() + timeout
        with self.seen:
            while True:
                for line in self.lines:
                    m = re.search(regex, line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("no line %r in %r" % (regex, self.lines))
                self.seen.wait(left)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.p.stdout.close()
        return self.p.returncode


class ToolTest(unittest.TestCase):
    def setUp(self):
        self.procs = []
        self.tmp = tempfile.mkdtemp(prefix="itools-selftest.")

    def tearDown(self):
        for p in reversed(self.procs):
            p.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self, script, *args):
        p = Proc(script, *args)
        self.procs.append(p)
        return p


class LoadgenScheduleTest(unittest.TestCase):
    def test_parse(self):
        cases = [
            ("three segments", "10s@2,30s@8,30s@1", [(10.0, 2.0), (30.0, 8.0), (30.0, 1.0)]),
            ("units", "500ms@4,2m@0.5,3@1", [(0.5, 4.0), (120.0, 0.5), (3.0, 1.0)]),
            ("pause", "5s@0", [(5.0, 0.0)]),
        ]
        for name, text, want in cases:
            with self.subTest(name):
                self.assertEqual(loadgen.parse_schedule(text), want)

    def test_parse_rejects(self):
        for name, text in [("no rate", "10s"), ("negative", "10s@-1"), ("zero length", "0s@1"),
                           ("bad unit", "10x@1"), ("empty", ""), ("nan", "1s@nan")]:
            with self.subTest(name):
                with self.assertRaises(ValueError):
                    loadgen.parse_schedule(text)

    def test_constant_arrivals_are_exact(self):
        got = list(loadgen.arrivals([(2.0, 5.0), (1.0, 0.0), (1.0, 2.0)], True, None))
        self.assertEqual([i for _, i in got], [0] * 10 + [2] * 2)
        self.assertAlmostEqual(got[1][0] - got[0][0], 0.2)
        self.assertAlmostEqual(got[10][0], 3.0)

    def test_poisson_arrivals_are_seeded_and_near_rate(self):
        import random
        a = list(loadgen.arrivals([(100.0, 8.0)], False, random.Random(7)))
        b = list(loadgen.arrivals([(100.0, 8.0)], False, random.Random(7)))
        c = list(loadgen.arrivals([(100.0, 8.0)], False, random.Random(8)))
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)
        self.assertTrue(700 < len(a) < 900, len(a))  # 800 expected; 3.5 sigma either side
        self.assertTrue(all(0 <= t < 100 for t, _ in a))


class ModelServerTest(ToolTest):
    def test_health_turns_ready_and_prints_ready(self):
        s = self.start("model_server.py", "--ready-after", "0.5", "--replica", "4")
        self.assertEqual(http("GET", s.url + "/health")[0], 503)
        self.assertEqual(http("POST", s.url + "/v1/completions", b"{}")[0], 503)
        s.wait_line("^ready$", 5)
        self.assertEqual(http("GET", s.url + "/health")[0], 200)
        code, body = http("POST", s.url + "/v1/completions", b'{"prompt": "a b", "max_tokens": 3}')
        self.assertEqual(code, 200)
        doc = json.loads(body)
        self.assertEqual((doc["replica"], doc["choices"][0]["finish_reason"]), (4, "stop"))
        self.assertEqual(doc["usage"]["completion_tokens"], 3)
        self.assertEqual(http("GET", s.url + "/generate")[0], 200)
        self.assertEqual(http("POST", s.url + "/v1/completions", b"[1]")[0], 400)

    def test_fifo_queue_and_metrics(self):
        s = self.start("model_server.py", "--ready-after", "0", "--delay", "0.4",
                       "--max-concurrency", "1", "--model", "org/m")
        s.wait_line("^ready$")
        done = []

        def one(i):
            http("POST", s.url + "/v1/completions", b"{}")
            done.append(i)

        threads = []
        for i in range(3):
            threads.append(threading.Thread(target=one, args=(i,)))
            threads[-1].start()
            time.sleep(0.05)  # arrival order 0, 1, 2
        time.sleep(0.1)
        types, samples = parse_exposition(http("GET", s.url + "/metrics")[1].decode())
        values = {(n, tuple(sorted(l.items()))): v for n, l, v in samples}
        base = (("engine", "0"), ("model_name", "org/m"))
        self.assertEqual(values[("vllm:num_requests_running", base)], 1)
        self.assertEqual(values[("vllm:num_requests_waiting", base)], 2)
        self.assertEqual(values[("vllm:kv_cache_usage_perc", base)], 1)
        for t in threads:
            t.join(5)
        self.assertEqual(done, [0, 1, 2])
        types, samples = parse_exposition(http("GET", s.url + "/metrics")[1].decode())
        for family, mtype in [("vllm:num_requests_running", "gauge"),
                              ("vllm:gpu_cache_usage_perc", "gauge"),
                              ("vllm:request_success_total", "counter"),
                              ("vllm:time_to_first_token_seconds", "histogram"),
                              ("vllm:e2e_request_latency_seconds", "histogram")]:
            self.assertEqual(types.get(family), mtype, family)
        e2e = [(l["le"], v) for n, l, v in samples if n == "vllm:e2e_request_latency_seconds_bucket"]
        counts = [v for _, v in e2e]
        self.assertEqual(counts, sorted(counts), "buckets must be cumulative")
        self.assertEqual(e2e[-1], ("+Inf", 3.0))
        self.assertEqual(e2e[0][0], "0.3")  # vLLM's first request-latency bound
        self.assertEqual(counts[:2], [0.0, 1.0])  # 0.4 s, 0.8 s, 1.2 s: one under 0.5
        ok = [v for n, l, v in samples
              if n == "vllm:request_success_total" and l["finished_reason"] == "stop"]
        self.assertEqual(ok, [3.0])
        promtool_check(self, http("GET", s.url + "/metrics")[1])

    def test_sigterm_finishes_in_flight_then_exits_zero(self):
        s = self.start("model_server.py", "--ready-after", "0", "--delay", "0.8")
        s.wait_line("^ready$")
        result = []
        t = threading.Thread(target=lambda: result.append(
            http("POST", s.url + "/v1/completions", b"{}")[0]))
        t.start()
        time.sleep(0.2)
        http("POST", s.url + "/prestop")
        s.wait_line("^prestop called replica=0")
        t0 = time.monotonic()
        s.p.send_signal(signal.SIGTERM)
        self.assertEqual(s.p.wait(5), 0)
        self.assertLess(time.monotonic() - t0, 2.5)
        t.join(5)
        self.assertEqual(result, [200])
        s.wait_line("drained=yes")
        with self.assertRaises(OSError):
            urllib.request.urlopen(s.url + "/health", timeout=1)


class FakeDcgmTest(ToolTest):
    def util(self, d):
        _, samples = parse_exposition(http("GET", d.url + "/metrics")[1].decode())
        return {l["gpu"]: (v, l) for n, l, v in samples if n == "DCGM_FI_DEV_GPU_UTIL"}

    def test_set_moves_values_and_labels_are_dcgm_exporters(self):
        d = self.start("fake_dcgm.py", "--gpus", "2", "--hostname", "node-a")
        before = self.util(d)
        self.assertEqual(sorted(before), ["0", "1"])
        self.assertEqual(before["0"][0], 0)
        labels = before["1"][1]
        for key in ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"):
            self.assertIn(key, labels)
        self.assertEqual((labels["Hostname"], labels["device"]), ("node-a", "nvidia1"))
        self.assertTrue(labels["UUID"].startswith("GPU-"))
        self.assertEqual(http("POST", d.url + "/set?gpu=1&util=75&pod=p&namespace=n")[0], 200)
        after = self.util(d)
        self.assertEqual((after["0"][0], after["1"][0]), (0, 75))
        self.assertEqual((after["1"][1]["pod"], after["1"][1]["namespace"]), ("p", "n"))
        self.assertNotIn("pod", after["0"][1])
        for bad in ("/set?gpu=2&util=1", "/set?util=x", "/set?temp=1", "/nope"):
            with self.subTest(bad):
                self.assertIn(http("POST", d.url + bad)[0], (400, 404))
        promtool_check(self, http("GET", d.url + "/metrics")[1])

    def test_state_file_is_reread(self):
        path = os.path.join(self.tmp, "state.json")
        with open(path, "w") as f:
            json.dump({"all": {"util": 10}}, f)
        d = self.start("fake_dcgm.py", "--gpus", "2", "--state-file", path)
        self.assertEqual([v for v, _ in self.util(d).values()], [10, 10])
        time.sleep(0.01)
        with open(path, "w") as f:
            json.dump({"gpus": {"0": {"util": 95}}}, f)
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        self.assertEqual(self.util(d)["0"][0], 95)


class BalancerTest(ToolTest):
    def test_round_robin_over_live_backends_and_file_changes(self):
        r1 = self.start("model_server.py", "--ready-after", "0", "--delay", "0", "--replica", "1")
        r2 = self.start("model_server.py", "--ready-after", "0", "--delay", "0", "--replica", "2")
        r3 = self.start("model_server.py", "--ready-after", "60", "--replica", "3")  # never ready
        backends = os.path.join(self.tmp, "backends")
        with open(backends, "w") as f:
            f.write("# replicas\n127.0.0.1:%d\n127.0.0.1:1\n127.0.0.1:%d\n" % (r1.port, r3.port))
        b = self.start("balancer.py", "--backends-file", backends, "--refresh", "0.1")
        b.wait_line("^backends live=127.0.0.1:%d$" % r1.port)

        def replicas(n):
            out = []
            for _ in range(n):
                code, body = http("POST", b.url + "/v1/completions", b"{}")
                self.assertEqual(code, 200)
                out.append(json.loads(body)["replica"])
            return out

        self.assertEqual(replicas(3), [1, 1, 1])
        with open(backends + ".tmp", "w") as f:
            f.write("127.0.0.1:%d\n127.0.0.1:%d\n" % (r1.port, r2.port))
        os.replace(backends + ".tmp", backends)
        b.wait_line("^backends live=127.0.0.1:%d,127.0.0.1:%d$" % (r1.port, r2.port))
        self.assertEqual(sorted(replicas(4)), [1, 1, 2, 2])
        r1.stop()  # listed and marked live until the next check: the retry covers it
        self.assertEqual(replicas(4), [2, 2, 2, 2])
        with open(backends, "w") as f:
            f.write("")
        b.wait_line("^backends live=-$")
        self.assertEqual(http("POST", b.url + "/v1/completions", b"{}")[0], 503)
        stats = json.loads(http("GET", b.url + "/_balancer/stats")[1])
        self.assertEqual(stats["live"], [])
        self.assertEqual(b.stop(), 0)


class LoadgenRunTest(ToolTest):
    def test_summary_counts_and_bounded_time(self):
        s = self.start("model_server.py", "--ready-after", "0", "--delay", "0.05", "--replica", "9")
        s.wait_line("^ready$")
        out = os.path.join(self.tmp, "load.json")
        t0 = time.monotonic()
        r = subprocess.run([PY, os.path.join(HERE, "loadgen.py"), "--url",
                            s.url + "/v1/completions", "--schedule", "1s@10,500ms@0,1s@4",
                            "--constant", "--out", out], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(time.monotonic() - t0, 5)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual([seg["sent"] for seg in doc["segments"]], [10, 0, 4])
        t = doc["total"]
        self.assertEqual((t["sent"], t["ok"], t["errors"], t["replicas"]), (14, 14, 0, {"9": 14}))
        self.assertGreaterEqual(t["latency_ms"]["p50"], 50)

    def test_errors_are_counted_by_kind_and_timeouts_end_the_run(self):
        s = self.start("model_server.py", "--ready-after", "0", "--delay", "5", "--drain", "0")
        s.wait_line("^ready$")
        out = os.path.join(self.tmp, "load.json")
        for name, url, kind in [("refused", "http://127.0.0.1:1/x", "connect"),
                                ("timeout", s.url + "/v1/completions", "timeout"),
                                ("404", s.url + "/nope", "http_404")]:
            with self.subTest(name):
                t0 = time.monotonic()
                r = subprocess.run([PY, os.path.join(HERE, "loadgen.py"), "--url", url,
                                    "--schedule", "300ms@10", "--constant", "--timeout", "0.5",
                                    "--out", out], capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertLess(time.monotonic() - t0, 3)
                with open(out) as f:
                    t = json.load(f)["total"]
                self.assertEqual((t["sent"], t["ok"], t["errors_by_kind"]), (3, 0, {kind: 3}))


if __name__ == "__main__":
    unittest.main()
