#!/bin/bash
# The throughput target of issue 9 (docs/benchmarks.md): the same torchrun job
# (examples/elastic/train.py, same samples) run three times on this machine: static at 1 agent,
# static at 2 agents (aiscale's `static` policy, min = max) and under aiscale's `training`
# policy (1-3 agents, starting at 1). Prints, per run, the job time (aiscale started -> the
# job's `done` event), the agent-seconds allocated (one agent = one worker = one CPU thread:
# the integral of the replica count over the job time, from aiscale's decisions) and the
# rescales; then job-time ratio of the best static run over aiscale (>= 0.95 is the target).
#
#   bash examples/elastic/throughput.sh build/aiscale [KEEP_DIR]
#   EPOCHS=4 EPOCH_SAMPLES=12800 bash examples/elastic/throughput.sh build/aiscale   # longer
#
# KEEP_DIR: keep the aiscale run's events log, store and log there (the recording
# `aiscale calibrate` reads). Ports below the ephemeral range, cleanup by PID
# (tests/integration/lib/common.sh).
set -u
aiscale=$(realpath "${1:?aiscale binary}")
keep=${2:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
# shellcheck source=tests/integration/lib/elastic.sh
source "$src/tests/integration/lib/elastic.sh"
itest_init
job_args="--epochs ${EPOCHS:-2} --epoch-samples ${EPOCH_SAMPLES:-6400} --batch 32 --load-s 6
          --eval-batches 8 --eval-s 12 --ckpt-every 20"

# write_config DIR POLICY MIN MAX (tests/integration/lib/elastic.sh)
write_config() {
  elastic_config "$1/aiscale.yaml" dir="$1" base="$(port_block 3)" name=elastic-throughput \
    id=throughput policy="$2" min="$3" max="$4" job="$job_args"
}

# run_one NAME POLICY MIN MAX: runs until the job's `done` event (30 min at most).
run_one() {
  local name=$1 dir=$ITEST_TMP/$1 t0 pid
  write_config "$dir" "$2" "$3" "$4"
  t0=$(date +%s.%N)
  itest_spawn "aiscale-$name" "$aiscale" run -c "$dir/aiscale.yaml" --verbose
  pid=$ITEST_LAST_PID
  wait_log_line "$dir/events.jsonl" '"ev": "done"' 1800 "$pid" >/dev/null 2>&1 ||
    echo "$name: the job did not finish" >&2
  itest_stop_pid "$pid" 90
  echo "$t0" >"$dir/t0"
  cp "$ITEST_TMP/aiscale-$name.log" "$dir/aiscale.log" 2>/dev/null
}

run_one static1 '{name: static, replicas: 1}' 1 1
run_one static2 '{name: static, replicas: 2}' 2 2
run_one aiscale '{name: training, reference_replicas: 2, rescales_per_hour: 60, rescale_burst: 3,
               min_dwell: 20s, restart_cost: 15s, warmup: 20s, grace_period: 20s}' 1 3
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp "$ITEST_TMP/aiscale/events.jsonl" "$ITEST_TMP/aiscale/store.db" "$ITEST_TMP/aiscale/aiscale.log" \
    "$ITEST_TMP/aiscale/aiscale.yaml" "$keep/"
  # The simulator on the calibrated run: predicted vs real (docs/benchmarks.md, "Elastic training").
  "$aiscale" calibrate --config "$keep/aiscale.yaml" --events "$keep/events.jsonl" \
    --store "$keep/store.db" -o "$keep/calibrated.yaml"
fi
"$ITEST_PY" - "$ITEST_TMP" <<'PY'
import datetime, json, re, sys
root = sys.argv[1]
DEC = re.compile(r"^aiscale: \S+ (\S+Z) \S+: .*action=scaled \((\d+) -> (\d+)\)")
def t_of(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
rows = {}
for name, initial in (("static1", 1), ("static2", 2), ("aiscale", 1)):
    d = f"{root}/{name}"
    t0 = float(open(f"{d}/t0").read())
    ev = [json.loads(l) for l in open(f"{d}/events.jsonl") if l.strip()]
    done = next((e for e in ev if e["ev"] == "done"), None)
    if done is None:
        print(f"{name}: no done event"); continue
    t1 = done["t"]
    size, last, agent_s, rescales = initial, t0, 0.0, []
    for line in open(f"{d}/aiscale.log", errors="replace"):
        m = DEC.match(line)
        if m and t_of(m.group(1)) < t1:
            t = t_of(m.group(1))
            agent_s += size * (t - last)
            size, last = int(m.group(3)), t
            rescales.append(f"{m.group(2)}->{m.group(3)}@{t - t0:.0f}s")
    agent_s += size * (t1 - last)
    rows[name] = (t1 - t0, agent_s)
    print(f"{name}: job time {t1 - t0:.1f} s, samples {done['samples']}, agent-seconds {agent_s:.0f}, "
          f"rescales {rescales}")
if len(rows) == 3:
    best = min(("static1", "static2"), key=lambda n: rows[n][0])
    print(f"throughput ratio aiscale / best static ({best}): {rows[best][0] / rows['aiscale'][0]:.3f}; "
          f"agent-seconds ratio: {rows['aiscale'][1] / rows[best][1]:.3f}")
PY
