#!/bin/bash
# `aiscale status`, `pause`, `resume`, `pin` and SIGHUP reload against a real `aiscale run`
# driving local replica processes (issue 25). Asserts:
#   1. `aiscale status` prints each workload with the numbers the API gives; `--watch` redraws;
#      `status NAME` is the describe view; `--json` is the API's JSON;
#   2. steering needs the token (none -> refused 401, wrong -> 403); pause of an unknown
#      workload -> 404; a pin beyond max_replicas -> 422 with the reason; with the token a pin
#      moves the replicas and the decisions say "pinned by API";
#   3. a restart on the same store keeps the pin;
#   4. SIGHUP with an invalid file: rejected with the reason in the log, the old config keeps
#      running; SIGHUP with a valid edit (max_replicas) applies it;
#   5. the token appears in no log.
# Usage: operator_cli.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
# shellcheck source=tests/integration/lib/operator.sh
source "$src/tests/integration/lib/operator.sh"
itest_init
py=$ITEST_PY

OP_AISCALE=$aiscale
OP_API=$(free_port)
base_steady=$(port_block 4)
op_write_config "$ITEST_TMP/live.yaml" "$OP_API" "$(port_block 4)" "$base_steady"
op_start aiscale1
op_wait_field steady ready 2 30 || itest_fail "steady never had 2 ready replicas"
url="http://127.0.0.1:$OP_API"
export AISCALE_URL=$url

# --- 1. status against the API ------------------------------------------------------------------
# The row of WORKLOAD in `aiscale status` as "desired current ready min max", and the same
# fields from the API; a tick may fall between the two reads, so up to 5 tries.
status_matches_api() {
  local i shown api
  for i in 1 2 3 4 5; do
    api=$(op_get /api/v1/workloads | "$py" -c "
import json, sys
for w in json.load(sys.stdin)['workloads']:
    print(w['key'], w['engine'], w['policy'], w['min_replicas'], w['max_replicas'], w['desired'], w['current'], w['ready'], w['rule'])")
    shown=$("$aiscale" status | "$py" -c "
import re, sys
rows = [re.split(r'\s{3,}', l.rstrip()) for l in sys.stdin][1:]
for r in rows:
    print(r[0], r[1], r[2], r[4], r[5], r[6], r[7], r[8], r[9])")
    [ "$api" = "$shown" ] && [ -n "$api" ] && return 0
    sleep 0.5
  done
  echo "status: $shown"
  echo "api:    $api"
  return 1
}
check "status prints every workload with the API's numbers" status_matches_api
"$aiscale" status >"$ITEST_TMP/status.txt"
check "status has the kubectl-like header" grep -q "^NAME .*SIGNALS (current/target) .*CONDITIONS" "$ITEST_TMP/status.txt"
check "status shows chat's signal as current/target" grep -Eq "concurrency: [0-9.]+/2" "$ITEST_TMP/status.txt"
timeout 5 "$aiscale" status --watch --interval 0.5 >"$ITEST_TMP/watch.txt" 2>&1
frames=$(grep -c "^Every 0.5s: aiscale status" "$ITEST_TMP/watch.txt")
check "status --watch redraws ($frames frames in 5 s)" test "$frames" -ge 3
check "every frame has the table" test "$(grep -c '^NAME ' "$ITEST_TMP/watch.txt")" = "$frames"
"$aiscale" status steady >"$ITEST_TMP/describe.txt" 2>&1
check "status NAME is the describe view" bash -c "grep -q '^Conditions:' '$ITEST_TMP/describe.txt' &&
  grep -q '^Recent decisions (newest first):' '$ITEST_TMP/describe.txt' && grep -q 'Max replicas:    4' '$ITEST_TMP/describe.txt'"
check "status --json is the API's JSON" bash -c "'$aiscale' status --json | '$py' -c 'import json,sys; assert json.load(sys.stdin)[\"count\"] == 2'"
"$aiscale" status nope >/dev/null 2>"$ITEST_TMP/nope.txt"
rc=$?
check "status of an unknown workload fails (exit $rc) with the server's reason" \
  bash -c "[ $rc = 1 ] && grep -q \"unknown workload 'nope'\" '$ITEST_TMP/nope.txt'"

# --- 2. steering ---------------------------------------------------------------------------------
tok=$ITEST_TMP/api.token
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$ITEST_TMP/wrong.token"
env -u AISCALE_TOKEN -u AISCALE_TOKEN_FILE "$aiscale" pause steady >/dev/null 2>"$ITEST_TMP/notoken.txt"
check "pause without a token is refused before any request" grep -q "a token is needed" "$ITEST_TMP/notoken.txt"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '' "$url/api/v1/workloads/steady/pause")
check "the API answers 401 without a token ($code)" test "$code" = 401
"$aiscale" pause steady --token-file "$ITEST_TMP/wrong.token" >/dev/null 2>"$ITEST_TMP/wrong.txt"
check "a wrong token is refused (403)" grep -q "answered 403" "$ITEST_TMP/wrong.txt"
"$aiscale" pause nope --token-file "$tok" >/dev/null 2>"$ITEST_TMP/unknown.txt"
check "pause of an unknown workload is a 404" grep -q "answered 404: unknown workload 'nope'" "$ITEST_TMP/unknown.txt"
"$aiscale" pin steady 9 --token-file "$tok" >/dev/null 2>"$ITEST_TMP/beyond.txt"
check "a pin beyond max is a 422 with the reason" grep -q "answered 422: cannot pin to 9 replicas: above max_replicas 4" "$ITEST_TMP/beyond.txt"
check "pin steady to 3 with the token" "$aiscale" pin steady 3 --token-file "$tok"
check "steady scales to the pin" op_wait_field steady ready 3 30
check "status shows the pin" bash -c "'$aiscale' status | grep '^steady' | grep -q 'Paused(PinnedByOperator)'"
pinned_said() {
  op_get "/api/v1/workloads/steady/decisions?limit=5" | "$py" -c "
import json, sys
ds = json.load(sys.stdin)['decisions']
sys.exit(0 if any('pinned by API to 3' in d['constrain_reason'] and d['rule'] == 'static' for d in ds) else 1)"
}
check "the next decisions say pinned by API" pinned_said

# --- 3. restart keeps the pin ---------------------------------------------------------------------
itest_stop_pid "$OP_PID" 15
op_start aiscale2
check "after a restart the pin is still in force" bash -c "sleep 2; '$aiscale' status steady | grep -q 'Override:        pinned by API to 3'"
check "and steady stays at 3" op_wait_field steady current 3 10

# --- 4. SIGHUP reload ----------------------------------------------------------------------------
cp "$ITEST_TMP/live.yaml" "$ITEST_TMP/live.good"
printf '  bogus: [\n' >>"$ITEST_TMP/live.yaml"
kill -HUP "$OP_PID"
check "an invalid file on SIGHUP is rejected with the reason" \
  wait_log_line "$ITEST_TMP/aiscale2.log" "reload of .* rejected; still running the previous config" 10 "$OP_PID"
check "the rejection names where the error is" grep -q "live.yaml:[0-9]*:[0-9]*" "$ITEST_TMP/aiscale2.log"
check "the old config keeps running" wait_http "$url/readyz" 5 200
n_before=$(op_get "/api/v1/workloads/steady/decisions?limit=1000" | "$py" -c "import json,sys; print(json.load(sys.stdin)['count'])")
sleep 2
n_after=$(op_get "/api/v1/workloads/steady/decisions?limit=1000" | "$py" -c "import json,sys; print(json.load(sys.stdin)['count'])")
check "and keeps deciding ($n_before -> $n_after)" test "$n_after" -gt "$n_before"
"$py" - "$ITEST_TMP/live.good" "$ITEST_TMP/live.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
# steady's bounds: the second max_replicas in the file
head, _, tail = text.rpartition("max_replicas: 4")
open(sys.argv[2], "w").write(head + "max_replicas: 5" + tail)
PY
kill -HUP "$OP_PID"
check "a valid edit on SIGHUP is applied" wait_log_line "$ITEST_TMP/aiscale2.log" "reloaded .*live.yaml" 10 "$OP_PID"
check "the API shows the new bound" op_wait_field steady max_replicas 5 10
sed -i 's/port: '"$OP_API"'/port: 1/' "$ITEST_TMP/live.yaml"
kill -HUP "$OP_PID"
check "an edit that needs a restart is rejected, naming the field" \
  wait_log_line "$ITEST_TMP/aiscale2.log" "spec.server changed, which needs a restart" 10 "$OP_PID"

# --- 5. the token is never logged ------------------------------------------------------------------
check "the token appears in no log" bash -c "! grep -rqF '$(cat "$tok")' '$ITEST_TMP'/*.log '$ITEST_TMP'/*.txt"
itest_stop_pid "$OP_PID" 15
echo "operator_cli: $passed passed, $failed failed"
[ "$failed" = 0 ]
