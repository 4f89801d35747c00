#!/usr/bin/python3
"""Watches which replica holds which GPU slot of a local pool, from the processes themselves.

    slot_watch.py --tag TAG --out FILE.json [--interval 0.2]

Every interval it reads /proc/*/environ and keeps the processes whose POOL_ITEST variable
starts with TAG: (the test sets POOL_ITEST=TAG:WORKLOAD:{replica} in each target's env, so a
replica's agent, its workers and its hooks share one holder name) and reads their
CUDA_VISIBLE_DEVICES (the slot ids the local engine gave the replica). A slot held by two
holders in one sample is a violation. On SIGTERM or SIGINT it writes FILE.json:
{samples, violations: [{t, slot, holders}], max_holders_per_slot, holders_seen:
{holder: [slots]}, busiest: the most slots in use in one sample}.
"""
import argparse
import json
import os
import signal
import sys
import time


def read_environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:  # gone, or not ours to read
        return None
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def sample(tag):
    """slot -> set of holders, for the processes marked with tag."""
    by_slot = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        env = read_environ(name)
        if not env:
            continue
        holder = env.get("POOL_ITEST", "")
        if not holder.startswith(tag + ":"):
            continue
        for slot in filter(None, env.get("CUDA_VISIBLE_DEVICES", "").split(",")):
            by_slot.setdefault(slot, set()).add(holder[len(tag) + 1:])
    return by_slot


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tag", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--interval", type=float, default=0.2)
    args = p.parse_args()
    state = {"samples": 0, "violations": [], "max_holders_per_slot": 0, "holders_seen": {},
             "busiest": 0}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    while not stop:
        by_slot = sample(args.tag)
        state["samples"] += 1
        state["busiest"] = max(state["busiest"], len(by_slot))
        for slot, holders in by_slot.items():
            state["max_holders_per_slot"] = max(state["max_holders_per_slot"], len(holders))
            for h in holders:
                seen = state["holders_seen"].setdefault(h, [])
                if slot not in seen:
                    seen.append(slot)
            if len(holders) > 1 and len(state["violations"]) < 100:
                state["violations"].append({"t": time.time(), "slot": slot,
                                            "holders": sorted(holders)})
        time.sleep(args.interval)
    with open(args.out, "w") as f:
        json.dump(state, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
