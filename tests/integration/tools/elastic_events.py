#!/usr/bin/python3
"""Summarizes an elastic training run: the job's events (examples/elastic/train.py --events)
and aiscale's decision log (aiscale run --verbose), as one JSON object on stdout.

    elastic_events.py --events events.jsonl --log aiscale.log [--kill-at UNIX_TIME ...]

- starts: every (re)start of the job: time, world size, resumed step and samples, the samples
  trained before it that it did not resume (`lost`: the highest sample count any step reached
  since the previous start, less the resumed count), and `cause`: "decision" when aiscale
  decided a rescale since the previous start, "kill" when a --kill-at time falls there (a kill
  wins), else "other"; `acked_step`: the step of the last checkpoint the job acknowledged to a
  request (POST /checkpoint) since the previous start, or null;
- decisions: every scale change aiscale made (`action=scaled (a -> b)`): its time, from and to,
  the job's phase then, and `latency_s`: decision to the first step at world size b;
- steps_by_world: how many steps ran at each world size.
"""
import argparse
import datetime
import json
import re
import sys

DECISION = re.compile(r"^aiscale: (\S+) (\d{4}-\d\d-\d\dT[\d:.]+Z) \S+: .*action=scaled \((\d+) -> (\d+)\)")


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def read_events(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except ValueError:
                pass  # a line cut by a SIGKILL
    return out


def read_decisions(path, workload):
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = DECISION.match(line)
            if m and (workload is None or m.group(1) == workload):
                out.append({"t": parse_time(m.group(2)), "from": int(m.group(3)), "to": int(m.group(4))})
    return out


def summarize(events, decisions, kills):
    starts, max_samples, prev_t, acked = [], 0, None, None
    steps_by_world = {}
    for e in events:
        if e["ev"] == "ckpt" and e["reason"] == "request":
            acked = e["step"]
        elif e["ev"] == "step":
            max_samples = max(max_samples, e["samples"])
            steps_by_world[str(e["world"])] = steps_by_world.get(str(e["world"]), 0) + 1
        elif e["ev"] == "start":
            t = e["t"]
            since = prev_t if prev_t is not None else float("-inf")
            cause = "first" if prev_t is None else "other"
            if prev_t is not None and any(since < d["t"] <= t for d in decisions):
                cause = "decision"
            if prev_t is not None and any(since < k <= t for k in kills):
                cause = "kill"
            starts.append({"t": t, "world": e["world"], "step": e["step"], "samples": e["samples"],
                           "resumed": e["resumed"], "lost": max(0, max_samples - e["samples"]), "cause": cause,
                           "acked_step": acked})
            max_samples, prev_t, acked = e["samples"], t, None
    phases = [e for e in events if e["ev"] == "phase"]
    for d in decisions:
        before = [p for p in phases if p["t"] <= d["t"]]
        d["phase"] = before[-1]["phase"] if before else None
        first = next((e for e in events if e["ev"] == "step" and e["t"] > d["t"] and e["world"] == d["to"]), None)
        d["latency_s"] = round(first["t"] - d["t"], 3) if first else None
    return {"starts": starts, "decisions": decisions, "steps_by_world": steps_by_world}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", required=True)
    p.add_argument("--log", required=True, help="aiscale run --verbose output")
    p.add_argument("--workload", default=None)
    p.add_argument("--kill-at", type=float, action="append", default=[])
    a = p.parse_args()
    json.dump(summarize(read_events(a.events), read_decisions(a.log, a.workload), a.kill_at), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
