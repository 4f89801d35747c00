#!/bin/bash
# The Slurm engine end to end: a real slurmctld + 3 slurmd on this host (lib/slurm.sh), and
# `aiscale run` with a static policy driving a workload of batch jobs (one per replica, an HTTP
# server each, readiness on the node's address + port):
#   1. `--once` runs at sizes 1, 3, 1: jobs tagged aiscale:<workload>:<i> appear and go, and
#      the time from the decision to the jobs RUNNING and ready (and to a scale-down done) is
#      measured and printed;
#   2. a request of 5 on 3 nodes is capped at 3, and the next decision's engine detail says
#      why (read from the store);
#   3. a daemon at size 2: a job scancel'ed by hand is replaced (time measured); slurmctld
#      stopped: the decisions say "unavailable", nothing is cancelled, and once slurmctld is
#      back the same jobs are still there.
# Usage: slurm_actuator.sh <aiscale binary> <source dir>
set -u
bin=$1
src=$2
# shellcheck source=tests/integration/lib/slurm.sh
source "$src/tests/integration/lib/slurm.sh"

slurm_itest 3
tmp=$ITEST_TMP
echo "ok   slurm cluster: slurmctld + 3 slurmd ($(sinfo -V))"

# Five consecutive free ports for replicas 0..4.
base=$(port_block 5)

cat >"$tmp/serve.sbatch" <<'EOF2'
#!/bin/bash
# replica {replica} of {workload}
exec /usr/bin/python3 -m http.server {port} --bind 127.0.0.1
EOF2

# config SIZE PERIOD: the controller config with a static policy at SIZE.
config() {
  cat >"$tmp/c.yaml" <<EOF2
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
metadata: {name: slurm-itest}
spec:
  period: $2
  store: {path: $tmp/store.db, heartbeat: 0}  # every decision: the checks read them
  run_dir: $tmp/run
  server: {enabled: false}
  workloads:
    - name: web
      kind: InferenceService
      min_replicas: 1
      max_replicas: 5
      policy: {name: static, replicas: $1}
      target:
        engine: slurm
        script: $tmp/serve.sbatch
        partition: debug
        base_port: $base
        readiness: {http: /}
        grace_period: 3s
        poll_interval: 500ms
        sbatch_args: ["--output=$tmp/job-%j.out", "--chdir=$tmp"]
EOF2
}

now() { date +%s.%N; }
elapsed() { "$ITEST_PY" -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
ready_count() {
  local n=0 i
  for ((i = 0; i < 5; i++)); do
    curl -s -o /dev/null -m 1 "http://127.0.0.1:$((base + i))/" && n=$((n + 1))
  done
  echo "$n"
}
# wait_jobs RUNNING READY [TIMEOUT]: until exactly RUNNING jobs of aiscale-web run (none
# pending) and READY replicas answer; prints the seconds each took from $t0.
wait_jobs() {
  local want=$1 want_ready=$2 timeout=${3:-60} t_run="" jobs running pending
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    jobs=$(slurm_active_jobs aiscale-web)
    running=$(grep -c RUNNING <<<"$jobs")
    pending=$(grep -c PENDING <<<"$jobs")
    if [ "$running" -eq "$want" ] && [ "$pending" -eq 0 ]; then
      [ -z "$t_run" ] && t_run=$(now)
      if [ "$(ready_count)" -eq "$want_ready" ]; then
        echo "at_size=$(elapsed "$t0" "$t_run")s ready=$(elapsed "$t0" "$(now)")s"
        return 0
      fi
    fi
    sleep 0.1
  done
  echo "timeout: jobs now:" >&2
  slurm_active_jobs >&2
  return 1
}
once() {
  config "$1" 1s
  t0=$(now)
  timeout 120 "$bin" run -c "$tmp/c.yaml" --once --verbose >>"$tmp/once.log" 2>&1 ||
    itest_fail "aiscale run --once at size $1 failed"
}
last_decision() {
  "$ITEST_PY" - "$tmp/store.db" <<'PY'
import json, sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "SELECT json FROM decisions ORDER BY id DESC LIMIT 1").fetchone()
print(json.dumps(json.loads(row[0])))
PY
}

# 1. Sizes 1 -> 3 -> 1.
once 1
r=$(wait_jobs 1 1) || itest_fail "size 1: one job did not become ready"
echo "ok   size 1: 1 job RUNNING and ready ($r after the decision)"
comments=$(slurm_active_jobs aiscale-web | awk '{print $4}' | tr '\n' ' ')
[ "$comments" = "aiscale:web:0 " ] || itest_fail "job comment tags: '$comments'"

once 3
r=$(wait_jobs 3 3) || itest_fail "scale-up 1 -> 3 did not complete"
echo "ok   scale-up 1 -> 3: $r (from starting aiscale run --once to all 3 jobs RUNNING / ready)"
echo "MEASURE scale_up_1_to_3 $r"

once 1
r=$(wait_jobs 1 1) || itest_fail "scale-down 3 -> 1 did not complete"
echo "ok   scale-down 3 -> 1: $r (from starting aiscale run --once to 2 jobs gone; grace 3s, the job exits on SIGTERM)"
echo "MEASURE scale_down_3_to_1 $r"
left=$(slurm_active_jobs aiscale-web | awk '{print $4}')
[ "$left" = "aiscale:web:0" ] || itest_fail "scale-down kept '$left', not replica 0"
grep -q "action=scaled (3 -> 1)" "$tmp/once.log" || itest_fail "no 'scaled (3 -> 1)' decision"

# 2. Five requested, three nodes.
once 5
grep -q "constrained=3" "$tmp/once.log" || itest_fail "a request of 5 on 3 nodes was not capped at 3"
r=$(wait_jobs 3 3) || itest_fail "capped scale-up to 3 did not complete"
echo "ok   request 5 on 3 nodes: constrained to 3 ($(grep -o 'constrained=3[^;]*' "$tmp/once.log" | tail -1))"
once 5
d=$(last_decision)
grep -q "partition debug has 0 idle node(s), so at most 3 replica(s) fit" <<<"$d" ||
  itest_fail "the next decision's engine detail does not say why: $d"
[ "$(slurm_active_jobs aiscale-web | wc -l)" -eq 3 ] || itest_fail "more than 3 jobs were submitted"
echo "ok   engine detail: $("$ITEST_PY" -c 'import json,sys; print(json.loads(sys.argv[1]).get("engine_detail"))' "$d")"

# 3. A daemon at size 2.
config 2 1s
t0=$(now)
itest_spawn daemon "$bin" run -c "$tmp/c.yaml" --verbose
daemon=$ITEST_LAST_PID
r=$(wait_jobs 2 2) || itest_fail "daemon: 3 -> 2 did not complete"
echo "ok   daemon: 3 -> 2 ($r)"

victim=$(slurm_active_jobs aiscale-web | awk 'NR==1 {print $1}')
t0=$(now)
scancel "$victim"
r=$(wait_jobs 2 2 60) || itest_fail "job $victim cancelled by hand was not replaced"
[ -z "$(slurm_active_jobs aiscale-web | awk -v v="$victim" '$1 == v')" ] ||
  itest_fail "job $victim still listed"
echo "ok   job $victim scancel'ed by hand was replaced: $r (from the scancel)"
echo "MEASURE replace_cancelled_job $r"
sleep 2
n=$("$ITEST_PY" - "$tmp/store.db" "$victim" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT json FROM decisions").fetchall()
print(sum(("job %s) left the queue; resubmitting" % sys.argv[2]) in r[0] for r in rows))
PY
)
[ "${n:-0}" -gt 0 ] || itest_fail "no decision's engine detail says job $victim was resubmitted"
echo "ok   $n decision(s) say: replica ... (job $victim) left the queue; resubmitting"

before=$(slurm_active_jobs aiscale-web | awk '{print $1}' | tr '\n' ' ')
slurm_stop_ctld
wait_log_line "$ITEST_TMP/daemon.log" "unable to observe scale: .*Slurm unavailable" 30 "$daemon" ||
  itest_fail "no decision saying Slurm is unavailable"
sleep 4
[ "$(ready_count)" -eq 2 ] || itest_fail "replicas stopped answering while slurmctld was down"
grep -E "unable to observe scale" "$ITEST_TMP/daemon.log" | tail -1 | cut -c1-300
slurm_start_ctld || itest_fail "slurmctld did not come back"
after=$(slurm_active_jobs aiscale-web | awk '{print $1}' | tr '\n' ' ')
[ "$before" = "$after" ] || itest_fail "jobs changed while slurmctld was down: '$before' -> '$after'"
echo "ok   slurmctld down: decisions said unavailable, no scale-down; jobs $after still running"
if grep -E "unable to observe" -A0 "$ITEST_TMP/daemon.log" | grep -q "action=scaled"; then
  itest_fail "a decision scaled while Slurm was unavailable"
fi

itest_stop_pid "$daemon" 20
[ "$(slurm_active_jobs aiscale-web | wc -l)" -eq 2 ] || itest_fail "aiscale's exit stopped Slurm jobs"
echo "ok   aiscale exit leaves the jobs to Slurm"
echo "PASS"
