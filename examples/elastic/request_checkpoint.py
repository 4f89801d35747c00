#!/usr/bin/python3
"""Asks an elastic training job to checkpoint now and waits for its acknowledgement.

The local actuator's pre_stop hook in torchrun mode (examples/elastic/aiscale.yaml): before an
agent is sent SIGTERM, this POSTs <url>/checkpoint?timeout=<s> to the job's rank 0 (the contract
in docs/training-engine-contract.md) and exits 0 once the job answers 200 with the durable
checkpoint's step (printed as one JSON line), 1 when the job refuses or cannot be reached,
2 when it does not answer within --timeout. The actuator sends SIGTERM either way.

    request_checkpoint.py --url http://127.0.0.1:29510 --timeout 20
"""
import argparse
import json
import sys
import time
import urllib.error
import urllib.request


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="the job's rank 0, e.g. http://127.0.0.1:29510")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for the ack")
    a = p.parse_args()
    started = time.time()
    req = urllib.request.Request(f"{a.url.rstrip('/')}/checkpoint?timeout={a.timeout}", data=b"", method="POST")
    try:
        with urllib.request.urlopen(req, timeout=a.timeout + 2) as resp:
            ack = json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        print(f"request_checkpoint: {a.url} answered {e.code}: {e.read()[:200]!r}", file=sys.stderr)
        return 1
    except (TimeoutError, OSError) as e:  # URLError is an OSError
        timed_out = isinstance(e, TimeoutError) or "timed out" in str(e)
        print(f"request_checkpoint: no acknowledgement from {a.url}: {e}", file=sys.stderr)
        return 2 if timed_out else 1
    ack["waited_s"] = round(time.time() - started, 3)
    print("request_checkpoint: acknowledged " + json.dumps(ack), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
