#!/usr/bin/env python3
"""Runs every inference example at other rates and cold starts (issue 24's held-out variants).

Each variant is the example with one change: rate_multiplier x0.5, x2, x3 (max_replicas scaled
with it; a trace longer than a week replays duration / rate days, to stay under the per-run
request limit) or a cold start of 60 s or 420 s (provisioning 0 s + load). The `targets:` block is
dropped (it judges the examples only). Prints attainment and GPU-hours over the oracle per
policy, and how many variants each policy meets the SLO on.

  scripts/inference_variants.py [--aiscale build/aiscale] [--policy slo --policy predictive]
                                [--jobs 2] [--only azure-conv] [--warm 5 [--cost-fraction 0.1]]
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import re
import subprocess
import sys
import tempfile

TRACES = ["azure-conv", "azure-code", "mooncake", "alibaba-genai"]
VARIANTS = [("base", None), ("x0.5", ("rate", 0.5)), ("x2", ("rate", 2)), ("x3", ("rate", 3)),
            ("cold60", ("cold", 60)), ("cold420", ("cold", 420))]


def with_warm_tier(text, wake_s, cost_fraction):
    # The service gains asleep replicas (vLLM sleep mode) and slo keeps a warm tier.
    text = re.sub(r"(\n(\s+)slo: \{ttft_s)",
                  rf"\n\2warm: {{wake_s: {wake_s:g}, cost_fraction: {cost_fraction:g}}}\1", text, 1)
    return re.sub(r"(- \{name: slo, slo: \{[^}]*\})", rf"\1, warm: {{wake: {wake_s:g}s}}", text)


def variant_text(text, change, examples_dir):
    # Trace paths are relative to the example: make them absolute for a file written elsewhere.
    text = re.sub(r"(path:\s*)(\.\./\S+)",
                  lambda m: m.group(1) + os.path.normpath(os.path.join(examples_dir, m.group(2))),
                  text)
    text = re.sub(r"\n  targets:\n(    .*\n)+", "\n", text)
    if change is None:
        return text
    kind, value = change
    if kind == "rate":
        m = re.search(r"rate_multiplier:\s*([0-9.]+)", text)
        base = float(m.group(1)) if m else 1.0
        if m:
            text = text.replace(m.group(0), f"rate_multiplier: {base * value:g}", 1)
        else:
            text = re.sub(r"(\n(\s+)trace:\n)", rf"\1\2  rate_multiplier: {value:g}\n", text, 1)
        # A month-long trace at a higher rate passes the simulator's per-run request limit
        # (docs/limits.md): replay as many days as keep the request count where it was.
        days = re.search(r"\n  duration:\s*(\d+)d", text)
        if days and value > 1 and int(days.group(1)) > 7:
            keep = int(int(days.group(1)) / value)
            text = text.replace(days.group(0), f"\n  duration: {keep}d")
            text = re.sub(r"(\n(\s+)rate_multiplier:[^\n]*)", rf"\1\n\2duration_s: {keep * 86400}",
                          text, 1)
        text = re.sub(r"max_replicas:\s*(\d+)",
                      lambda mm: f"max_replicas: {max(1, math.ceil(int(mm.group(1)) * value))}",
                      text, 1)
    else:
        text = re.sub(r"cold_start:\s*\{[^}]*\}",
                      f"cold_start: {{provisioning_s: 0, model_load_s: {value}}}", text, 1)
    return text


def run(aiscale, path, policies):
    cmd = [aiscale, "simulate", path, "--json", "--out", path + ".out"]
    for p in policies:
        cmd += ["--policy", p]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:]}
    runs = json.loads(out.stdout)["runs"]
    return {r["policy"]: (r["slo_attainment"], r["gpu_hours_over_oracle"], after_first_start(r))
            for r in runs}


def after_first_start(run):
    # Attainment of what happened after the first cold start (+ 60 s): the part a policy can
    # act on, when the service starts at the first minute's size. Requests are counted when
    # they arrive and misses when they end, so it is an approximation at the cut.
    timeline = run.get("timeline") or []
    cut = (run.get("cold_start_s") or 0) + 60
    later = [p for p in timeline if p.get("t_s", 0) >= cut]
    if not later:
        return None
    arrived = timeline[-1]["arrived"] - later[0]["arrived"]
    missed = timeline[-1]["missed"] - later[0]["missed"]
    return 1 - missed / arrived if arrived > 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiscale", default="build/aiscale")
    ap.add_argument("--policy", action="append")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", action="append")
    ap.add_argument("--warm", type=float, metavar="WAKE_S",
                    help="give every service a warm tier waking in WAKE_S, and slo one too")
    ap.add_argument("--cost-fraction", type=float, default=0.1,
                    help="with --warm: the price of an asleep GPU-hour (default 0.1)")
    args = ap.parse_args()
    policies = args.policy or ["slo", "predictive"]
    here = os.path.dirname(os.path.abspath(__file__))
    examples = os.path.join(os.path.dirname(here), "examples")
    tmp = tempfile.mkdtemp(prefix="aiscale-variants-")
    jobs = {}
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        for trace in args.only or TRACES:
            src = os.path.join(examples, f"inference-{trace}.yaml")
            text = open(src).read()
            if args.warm is not None:
                text = with_warm_tier(text, args.warm, args.cost_fraction)
            for name, change in VARIANTS:
                path = os.path.join(tmp, f"{trace}-{name}.yaml")
                with open(path, "w") as f:
                    f.write(variant_text(text, change, examples))
                jobs[(trace, name)] = pool.submit(run, args.aiscale, path, policies)
    met = {p: 0 for p in policies}
    later = {p: 0 for p in policies}
    print("| trace | variant | " + " | ".join(f"{p} attainment / oracle (after the first cold "
                                            "start)" for p in policies) + " |")
    print("|---|---|" + "---|" * len(policies))
    for (trace, name), fut in jobs.items():
        res = fut.result()
        if "error" in res:
            print(f"| {trace} | {name} | error: {res['error']} |")
            continue
        cells = []
        for p in policies:
            att, ratio, after = res[p]
            met[p] += att >= 0.99
            later[p] += after is not None and after >= 0.99
            cells.append(f"{att:.4f} / {ratio:.2f}x ({after:.4f})" if after is not None
                         else f"{att:.4f} / {ratio:.2f}x")
        print(f"| {trace} | {name} | " + " | ".join(cells) + " |")
    for p in policies:
        print(f"{p}: SLO (0.99) met on {met[p]} of {len(jobs)}; after the first cold start on "
              f"{later[p]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
