#!/bin/bash
# Elastic training, bad input (issue 9): one `aiscale run` with two training workloads that
# break the contract, each scaled by the `training` policy (which would grow both to 2 on good
# signals). Asserts:
#   taken  (torchrun job whose rendezvous port another process holds): agent 0 fails with a
#          clear error (the port, "Address already in use"), the actuator backs off (few starts,
#          not a thrash), the Decision says why the replica is down (engine detail: the exit,
#          "times in a row", the next start), the job never exposes metrics and aiscale never
#          scales it;
#   broken (a job serving NaN samples/s and a phase aiscale does not know, and never
#          acknowledging a checkpoint request): never scaled, its decisions name the NaN
#          signal and the phase as missing; request_checkpoint.py gives up within its timeout (exit 2); at aiscale's
#          stop the pre-stop hook is cut off by its timeout and the replica still gets SIGTERM;
#   both: no process left after aiscale stops.
# Usage: elastic_bad_input.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
lib="$src/tests/integration/lib"
tools="$src/tests/integration/tools"
elastic="$src/examples/elastic"
# shellcheck source=tests/integration/lib/common.sh
source "$lib/common.sh"
# shellcheck source=tests/integration/lib/elastic.sh
source "$lib/elastic.sh"
elastic_require_torch
itest_init
py=$ITEST_PY

# rendezvous (taken), metrics (never served), aiscale's API, the fake job's replica ports.
base=$(port_block 5)
[ -n "$base" ] || itest_fail "no free port block"
rdzv=$base metrics=$((base + 1)) api=$((base + 2)) fake=$((base + 3))
w=$ITEST_TMP/w
mkdir -p "$w/logs" "$w/run"
itest_spawn holder "$py" -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.1', $rdzv)); s.listen(); print('holding', flush=True)
time.sleep(600)"
wait_log_line "$ITEST_TMP/holder.log" holding 10 || itest_fail "could not take the rendezvous port"

# The elastic job's agent (lib/elastic.sh), here never able to host its rendezvous.
taken_command=$(elastic_agent_args rdzv="$rdzv" id=bad ckpt="$w/ckpt" metrics="$metrics" \
  nnodes=1:2 max_restarts= | elastic_yaml_list) || itest_fail "could not write the agent command"
cat >"$ITEST_TMP/aiscale.yaml" <<EOF
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
metadata: {name: elastic-bad-input}
spec:
  period: 2s
  store: $ITEST_TMP/store.db
  server: {host: 127.0.0.1, port: $api}
  sources:
    - {name: job, type: scrape, preset: training, targets: ['http://127.0.0.1:$metrics/metrics'], timeout: 2s}
    - {name: fake, type: scrape, preset: training, targets: replicas, timeout: 2s}
  workloads:
    - name: taken
      kind: TrainingJob
      min_replicas: 1
      max_replicas: 2
      policy: {name: training, reference_replicas: 2, rescales_per_hour: 60, min_dwell: 10s, restart_cost: 15s}
      signals:
        - {name: samples_per_s, source: job}
        - {name: samples_remaining, source: job}
      target:
        engine: local
        command: $taken_command
        rendezvous_host_replica: 0
        readiness: {log: 'aiscale-elastic: worker'}   # its worker joined a rendezvous
        ready_timeout: 120s
        restart_backoff: {initial: 2s, max: 16s}
        log_dir: $w/logs
        run_dir: $w/run
    - name: broken
      kind: TrainingJob
      min_replicas: 1
      max_replicas: 2
      policy: {name: training, reference_replicas: 2, rescales_per_hour: 60, min_dwell: 10s, restart_cost: 15s}
      signals:
        - {name: samples_per_s, source: fake}
        - {name: samples_remaining, source: fake}
        - {name: phase, source: fake}
      target:
        engine: local
        command: [/usr/bin/python3, $tools/fake_training_job.py, --port, '{port}',
                  --samples-per-s, NaN, --phase, warmup, --events, $w/fake-events]
        base_port: $fake
        pre_stop:
          command: [/usr/bin/python3, $elastic/request_checkpoint.py, --url, 'http://127.0.0.1:{port}',
                    --timeout, '3']
          timeout: 5s
        grace_period: 5s
        log_dir: $w/logs
        run_dir: $w/run
EOF
itest_spawn aiscale "$aiscale" run -c "$ITEST_TMP/aiscale.yaml" --verbose
aiscale_pid=$ITEST_LAST_PID
log=$ITEST_TMP/aiscale.log

# The crash loop: wait for agent 0's first two failures (torch imports take seconds, many on a
# busy machine: the wait ends when its log stops growing for 2 minutes, not at a fixed time),
# then count the failures in the next 40 s. With the backoff (4, 8, 16 s from there) that is at
# most 4; without one, a start every few seconds. A busy machine only makes it fewer.
failures() { grep -c "RendezvousConnectionError: The connection" "$agent_log" 2>/dev/null || true; }
agent_log=
size=-1
since=$SECONDS
while :; do
  logs=("$w"/logs/*taken-0.log)
  agent_log=${logs[0]}
  [ -e "$agent_log" ] || agent_log=
  [ -n "$agent_log" ] && [ "$(failures)" -ge 2 ] && break
  pid_alive "$aiscale_pid" || itest_fail "aiscale exited"
  now_size=$(stat -c %s "$agent_log" 2>/dev/null || echo 0)
  if [ "$now_size" != "$size" ]; then
    size=$now_size
    since=$SECONDS
  elif ((SECONDS - since > 120)); then
    itest_fail "agent 0 stopped failing, or never did ($(failures) failure(s) logged)"
  fi
  sleep 0.5
done
before=$(failures)
sleep 40

# taken
check "agent 0's log names the taken rendezvous port" \
  grep -q "failed to bind to .*:$rdzv (errno: 98 - Address already in use)" "$agent_log"
check "agent 0's log says the c10d store could not be set up" \
  grep -q "The connection to the C10d store has failed" "$agent_log"
starts=$(failures)
in_window=$((starts - before))
echo "agent 0 failed $starts time(s), $in_window of them in the 40 s after the 2nd"
check "the crash loop backs off (at most 4 failed starts in 40 s after the 2nd, got $in_window)" \
  test "$in_window" -le 4
check "the crash loop is seen at all (at least 2 failed starts)" test "$starts" -ge 2
curl -s -m 5 "http://127.0.0.1:$api/api/v1/workloads/taken/decisions?limit=100" >"$ITEST_TMP/taken.json"
check "a decision says why the agent is down (exit, times in a row, next start)" "$py" - "$ITEST_TMP/taken.json" <<'EOF'
import json, sys
body = json.load(open(sys.argv[1]))
ds = body if isinstance(body, list) else body.get("decisions", body.get("items", []))
text = json.dumps(ds)
sys.exit(0 if ("times in a row" in text and "next start in" in text and "exited with status" in text) else 1)
EOF
check "aiscale never scaled the job that never exposed metrics" \
  bash -c "! grep -q '^aiscale: taken .*action=scaled' '$log'"
check "its decisions say the signal is missing (fetch failed)" \
  grep -q "^aiscale: taken .*samples_per_s fetch_failed" "$log"

# broken
check "aiscale never scaled the job serving NaN" bash -c "! grep -q '^aiscale: broken .*action=scaled' '$log'"
check "its decisions name the NaN samples_per_s" \
  grep -q "^aiscale: broken .*samples_per_s is invalid (all 1 values dropped (1 NaN" "$log"
check "the unknown phase is not data: its decisions say phase is missing" \
  grep -q "^aiscale: broken .*phase missing" "$log"
t0=$SECONDS
"$py" "$elastic/request_checkpoint.py" --url "http://127.0.0.1:$fake" --timeout 2 >/dev/null 2>&1
rc=$?
check "request_checkpoint gives up on a job that never acknowledges (exit 2, got $rc)" test "$rc" = 2
check "and within its timeout (took $((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 8

# stop: the pre-stop hook is cut off, SIGTERM still comes; nothing left.
t0=$SECONDS
itest_stop_pid "$aiscale_pid" 60
echo "aiscale stopped in $((SECONDS - t0)) s"
check "the unanswered checkpoint request did not keep the replica: it got SIGTERM" \
  grep -q "sigterm" "$w/fake-events"
check "the pre-stop hook asked for a checkpoint first" grep -q "checkpoint-request" "$w/fake-events"
holder=$(head -1 <<<"${ITEST_PIDS[0]}")
left=$(itest_leftovers | grep -vx "$holder" | tr '\n' ' ')
check "no agent, worker or replica left after aiscale stopped (${left:-none})" test -z "$left"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || itest_fail "$failed check(s) failed"
