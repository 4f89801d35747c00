#!/bin/bash
# The shared pool's size read from a real Slurm (issue 23 §4: "Slurm (GPUs from sinfo gres)"):
# slurmctld + 3 slurmd on this host, each node declaring Gres=gpu:4 (lib/slurm.sh,
# SLURM_GPUS_PER_NODE), and `aiscale run` with `pool: {from: slurm, slurm: {partition: debug}}`.
# One workload holds the pool's GPUs: a service of 3 replicas of 4 GPUs on the local engine
# (/bin/sleep: the pool's size is what is under test here, not the Slurm engine, which
# slurm_actuator.sh covers). Asserts, from GET /api/v1/pool and the workload's decisions:
#   1. the pool is the 12 GPUs of the 3 idle nodes, and the detail says where they come from;
#   2. a node drained (scontrol): the pool drops to 8 once the drop outlasts shrink_grace (2 s),
#      the detail names the node, and the service is shrunk to 2 replicas to fit, the Decision
#      saying so ("the pool shrank");
#   3. the node resumed: the pool is 12 again and the service grows back to 3;
#   4. slurmctld stopped: the pool's size is unknown (sinfo fails), the detail says why, and
#      the service keeps its 3 replicas: missing pool data shrinks no one.
# Usage: pool_slurm.sh <aiscale binary> <source dir>
set -u
bin=$1
src=$2
# shellcheck source=tests/integration/lib/slurm.sh
source "$src/tests/integration/lib/slurm.sh"

export SLURM_GPUS_PER_NODE=4
slurm_itest 3
tmp=$ITEST_TMP
echo "ok   slurm cluster: slurmctld + 3 slurmd with gres gpu:4 each ($(sinfo -V))"

api=$(free_port)
cat >"$tmp/c.yaml" <<EOF2
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
metadata: {name: pool-slurm}
spec:
  period: 1s
  store: {path: $tmp/store.db, heartbeat: 0}
  run_dir: $tmp/run
  server: {port: $api}
  pool:
    from: slurm
    slurm: {partition: debug, slurm_conf: $SLURM_CONF}
    shrink_grace: 2s
    tenants: [{name: search}]
  workloads:
    - name: chat
      kind: InferenceService
      tenant: search
      gpus_per_replica: 4
      min_replicas: 1
      max_replicas: 3
      policy: {name: static, replicas: 3}
      target: {engine: local, command: [/bin/sleep, '600'], grace_period: 1s}
EOF2
itest_spawn daemon "$bin" run -c "$tmp/c.yaml" --verbose
daemon=$ITEST_LAST_PID
wait_http "http://127.0.0.1:$api/readyz" 60 || itest_fail "the daemon did not become ready"

# until EXPR [TIMEOUT_S]: EXPR, a Python expression over `p` (GET /api/v1/pool) and `w` (GET
# /api/v1/workloads/chat), holds; prints the last value of both on a timeout.
until_json() {
  local deadline=$((SECONDS + ${2:-60}))
  while ((SECONDS < deadline)); do
    pool_json_check "$1" && return 0
    pid_alive "$daemon" || itest_fail "aiscale exited"
    sleep 0.3
  done
  echo "timed out waiting for: $1" >&2
  curl -s "http://127.0.0.1:$api/api/v1/pool" >&2
  echo >&2
  return 1
}
pool_json_check() {
  curl -s -m 2 "http://127.0.0.1:$api/api/v1/pool" >"$tmp/pool.json" || return 1
  curl -s -m 2 "http://127.0.0.1:$api/api/v1/workloads/chat" >"$tmp/chat.json" || return 1
  "$ITEST_PY" - "$1" "$tmp/pool.json" "$tmp/chat.json" <<'PY'
import json, sys
try:
    p = json.load(open(sys.argv[2]))
    w = json.load(open(sys.argv[3]))
except ValueError:
    sys.exit(1)
sys.exit(0 if eval(sys.argv[1]) else 1)
PY
}
field() { "$ITEST_PY" -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }
current='w["last_decision"]["current"]'

# 1. Twelve GPUs on three nodes.
until_json "p['known'] and p['gpus'] == 12 and $current == 3" 60 ||
  itest_fail "the pool never read 12 GPUs with the service at 3"
echo "ok   pool from Slurm: $(field "$tmp/pool.json" '["detail"]')"

# 2. node2 drained: 8 GPUs, the service shrunk to 2.
scontrol update nodename=node2 state=drain reason=maintenance
until_json "p['gpus'] == 8 and $current == 2" 60 ||
  itest_fail "a drained node did not shrink the pool to 8 and the service to 2"
echo "ok   node2 drained: $(field "$tmp/pool.json" '["detail"]')"
grep -q "not counted: node2 (idle+drain, 4 GPUs)" "$tmp/pool.json" ||
  itest_fail "the pool's detail does not name the drained node"
# The store writes in batches: the decision may land a moment after the API shows its result.
shrink_decision() {
  curl -s -m 5 "http://127.0.0.1:$api/api/v1/workloads/chat/decisions?limit=1000" \
    >"$tmp/decisions.json" || return 1
  "$ITEST_PY" - "$tmp/decisions.json" <<'PY'
import json, sys
ds = json.load(open(sys.argv[1]))["decisions"]
for d in ds:
    p = d.get("pool", {})
    if p.get("reason") == "shrunk" and "the pool shrank to 8 GPUs" in p.get("detail", ""):
        print(p["detail"])
        sys.exit(0)
print("none among %d decisions: %s" % (len(ds), " ".join(
    str(d.get("pool", {}).get("reason")) for d in ds[:12])), file=sys.stderr)
sys.exit(1)
PY
}
shrink=""
for _ in $(seq 30); do
  shrink=$(shrink_decision 2>"$tmp/shrink.err") && break
  sleep 0.5
done
[ -n "$shrink" ] ||
  itest_fail "no decision of the service says the pool shrank it to fit 8 GPUs ($(cat "$tmp/shrink.err"))"
echo "ok   service shrunk to 2: $shrink"

# 3. node2 back: 12 GPUs, the service at 3 again.
scontrol update nodename=node2 state=resume
until_json "p['gpus'] == 12 and $current == 3" 120 ||
  itest_fail "the pool and the service did not come back to 12 GPUs and 3 replicas"
echo "ok   node2 resumed: 12 GPUs, service at 3"

# 4. slurmctld down: unknown, nobody shrunk.
slurm_stop_ctld
until_json "not p['known']" 60 || itest_fail "the pool stayed known with slurmctld down"
echo "ok   slurmctld down: $(field "$tmp/pool.json" '["detail"]' | cut -c1-200)"
sleep 5
pool_json_check "not p['known'] and $current == 3 and w['last_decision']['constrained'] == 3" ||
  itest_fail "the service changed size while the pool was unknown: $(cat "$tmp/chat.json")"
curl -s -m 5 "http://127.0.0.1:$api/api/v1/workloads/chat/decisions?limit=8" >"$tmp/decisions.json"
n=$("$ITEST_PY" - "$tmp/decisions.json" <<'PY'
import json, sys
ds = json.load(open(sys.argv[1]))["decisions"]
# The last 8 decisions (newest first) were all made while the pool was unknown: none below 3.
print(sum(1 for d in ds if d.get("constrained", 0) < 3) if len(ds) == 8 else "too few")
PY
)
[ "$n" = 0 ] || itest_fail "$n of the last decisions shrank the service while the pool was unknown"
echo "ok   the service kept 3 replicas while the pool's size was unknown"
slurm_start_ctld || itest_fail "slurmctld did not come back"
until_json "p['known'] and p['gpus'] == 12" 60 || itest_fail "the pool did not come back"
echo "ok   slurmctld back: the pool reads 12 GPUs again"

itest_stop_pid "$daemon" 20
echo "PASS"
