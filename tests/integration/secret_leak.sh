#!/bin/bash
# Secrets named in a config never appear in any output (issue 11 §5). A live `aiscale run` uses
# three random 32-character bearer tokens: a Prometheus source's bearer_token_file, a
# kubeconfig's static `token` and a kubeconfig's `tokenFile` (kubernetes engine). The server it
# talks to (tools/secret_echo.py) answers every request with HTTP 401 and quotes the request's
# Authorization header back in the body and a header, and one more source with the token points
# at a port nothing listens on, so every token-bearing path logs errors. Then every output is
# grepped for each token: the daemon's stdout and stderr (--verbose), a second `--once` run on
# the same store, `validate`, `explain`, the SQLite store and its WAL, every file beside it
# (replica logs), and the API (/healthz, /readyz, /metrics, /api/v1/workloads, each workload and
# its decisions). Startup failures with a token in the kubeconfig (a malformed file after the
# token line, a server nobody answers, a token that is not a string) are grepped the same way, and so
# are `validate` and `simulate` (stdout, stderr and the whole --out folder) of scenarios whose
# trace path is a token file: a scenario has no credential fields, but it can name any file.
# Control: the echo server must have received each token, so the test cannot pass vacuously.
# Usage: secret_leak.sh <aiscale binary> <source dir>
set -u
bin="$1"
src="$2"
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
itest_init

fail() { # never prints a log: it may hold the secret
  echo "FAIL: $*"
  exit 1
}

secrets="$ITEST_TMP/secrets" # token files, kubeconfigs, the echo server's record: not grepped
out="$ITEST_TMP/out"         # every output of aiscale: grepped
mkdir -p "$secrets" "$out"
token() { "$ITEST_PY" -c 'import secrets,string; a=string.ascii_letters+string.digits; print("".join(secrets.choice(a) for _ in range(32)))'; }
tok_prom=$(token)
tok_kube=$(token)
tok_kube_file=$(token)
printf '%s\n' "$tok_prom" >"$secrets/prom-token"
printf '%s' "$tok_kube_file" >"$secrets/kube-token"

read -r echo_port api_port dead_port <<<"$(free_ports 3)"
itest_spawn echo "$ITEST_PY" "$ITEST_TOOLS/secret_echo.py" --port "$echo_port" \
  --seen "$secrets/seen"
echo_pid=$ITEST_LAST_PID
wait_log_line "$ITEST_TMP/echo.log" "listening port=$echo_port" 15 "$echo_pid" ||
  fail "secret_echo.py did not start"

# kubeconfig FILE USER_FIELDS [SERVER]: one cluster, one user, one context.
kubeconfig() {
  cat >"$1" <<YAML
apiVersion: v1
kind: Config
current-context: fake
clusters: [{name: fake, cluster: {server: "${3:-http://127.0.0.1:$echo_port}"}}]
contexts: [{name: fake, context: {cluster: fake, user: u}}]
users:
- name: u
  user: $2
YAML
}
kubeconfig "$secrets/kube-static" "{token: \"$tok_kube\"}"
kubeconfig "$secrets/kube-file" "{tokenFile: $secrets/kube-token}"

run="$out/run" # the store and the replica logs beside it
mkdir -p "$run"
cat >"$out/config.yaml" <<YAML
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
spec:
  period: 1s
  store: {path: $run/store.db, heartbeat: 0}  # every decision: the check counts them
  server: {port: $api_port}
  sources:
    - {name: p-echo, type: prometheus, url: 'http://127.0.0.1:$echo_port/prom', timeout: 2s,
       bearer_token_file: $secrets/prom-token}
    - {name: p-dead, type: prometheus, url: 'http://127.0.0.1:$dead_port', timeout: 1s,
       bearer_token_file: $secrets/prom-token}
  workloads:
YAML
for s in echo dead; do
  cat >>"$out/config.yaml" <<YAML
    - name: w-$s
      kind: Deployment
      min_replicas: 1
      max_replicas: 2
      target: {engine: local, command: [/bin/sleep, '600'], grace_period: 1s}
      policy:
        name: hpa
        metrics: [{signal: concurrency, type: Pods, target: {type: AverageValue, value: 10}}]
      signals:
        - {name: concurrency, source: p-$s, query: 'sum by (pod) (vllm:num_requests_running)'}
YAML
done
for k in static file; do
  cat >>"$out/config.yaml" <<YAML
    - name: w-kube-$k
      kind: Deployment
      min_replicas: 1
      max_replicas: 2
      policy: {name: static, replicas: 1}
      target: {engine: kubernetes, kind: Deployment, namespace: ai, name: llm-$k,
               auth: {kubeconfig: $secrets/kube-$k}}
YAML
done
workloads="w-echo w-dead w-kube-static w-kube-file"

"$bin" validate "$out/config.yaml" >"$out/validate.out" 2>"$out/validate.err" ||
  fail "aiscale validate rejected the config"

itest_spawn aiscale "$bin" run -c "$out/config.yaml" --verbose
daemon=$ITEST_LAST_PID
wait_log_line "$ITEST_TMP/aiscale.log" "serving .* on 127.0.0.1:$api_port" 30 "$daemon" ||
  fail "aiscale run did not start"
api="http://127.0.0.1:$api_port"
# Until every workload has a few decisions (bounded).
for ((i = 0; i < 60; i++)); do
  n=0
  for w in $workloads; do
    curl -s -m 5 "$api/api/v1/workloads/$w/decisions?limit=3" |
      "$ITEST_PY" -c 'import json,sys; sys.exit(len(json.load(sys.stdin)["decisions"]) < 3)' \
        2>/dev/null && n=$((n + 1))
  done
  [ "$n" = 4 ] && break
  pid_alive "$daemon" || fail "aiscale run exited"
  sleep 0.5
done
[ "$n" = 4 ] || fail "not every workload has 3 decisions after 30 s"
for p in healthz readyz metrics api/v1/workloads; do
  curl -s -m 5 -D "$out/api-${p//\//_}.headers" "$api/$p" >"$out/api-${p//\//_}.body"
done
for w in $workloads; do
  curl -s -m 5 "$api/api/v1/workloads/$w" >"$out/api-$w.json"
  curl -s -m 5 "$api/api/v1/workloads/$w/decisions?limit=100" >"$out/api-$w-decisions.json"
  "$bin" explain "$w" --url "$api" --limit 5 >"$out/explain-$w.out" 2>&1
done
itest_stop_pid "$daemon" 30
cp "$ITEST_TMP/aiscale.log" "$out/run.log"
# Decisions say why (so the token paths really ran): the 401 and the refused connection.
grep -q "HTTP 401" "$out/api-w-kube-static-decisions.json" || fail "w-kube-static: no 401"
grep -q "HTTP 401" "$out/api-w-echo-decisions.json" || fail "w-echo: no 401"
grep -q "fetch_failed" "$out/api-w-dead-decisions.json" || fail "w-dead: no fetch failure"

# A restart on the same store, one tick.
"$bin" run -c "$out/config.yaml" --once >"$out/once.out" 2>"$out/once.err"

# Startup failures with the token in the kubeconfig.
kubeconfig "$secrets/kube-broken" "{token: \"$tok_kube\"}"
printf 'preferences: {\n  "%s": [\n' "$tok_kube" >>"$secrets/kube-broken"
kubeconfig "$secrets/kube-dead" "{token: \"$tok_kube\"}" "http://127.0.0.1:$dead_port"
kubeconfig "$secrets/kube-notstring" "{token: {\"$tok_kube\": 1}}"
for k in broken dead notstring; do
  sed -e "s#$secrets/kube-static#$secrets/kube-$k#" "$out/config.yaml" |
    sed -e "s#path: $run/store.db#path: $out/run-$k/store.db#" >"$out/config-$k.yaml"
  "$bin" run -c "$out/config-$k.yaml" --once >"$out/run-$k.out" 2>"$out/run-$k.err"
  "$bin" validate "$out/config-$k.yaml" >"$out/validate-$k.out" 2>&1
done

# Scenarios: a trace path that is a token file, in every trace format.
for fmt in azure_llm mooncake alibaba_genai rate_series; do
  sed -e "s#format: .*#format: $fmt#" -e "s#path: .*#path: $secrets/prom-token#" \
    "$src/examples/inference-azure-code.yaml" >"$out/scenario-$fmt.yaml"
  grep -q "path: $secrets/prom-token" "$out/scenario-$fmt.yaml" || fail "scenario edit failed"
  "$bin" validate "$out/scenario-$fmt.yaml" >"$out/validate-$fmt.out" 2>&1
  "$bin" simulate "$out/scenario-$fmt.yaml" --out "$out/sim-$fmt" >"$out/sim-$fmt.out" 2>&1
done

# The control: each token reached the server (the error paths above really carried it).
for t in "$tok_prom" "$tok_kube" "$tok_kube_file"; do
  grep -q "Bearer $t" "$secrets/seen" || fail "a token never reached the server"
done
[ -s "$run/store.db" ] || fail "no store file"
files=$(find "$out" -type f | wc -l)
leaks=$(grep -r -a -l -F -e "$tok_prom" -e "$tok_kube" -e "$tok_kube_file" "$out")
if [ -n "$leaks" ]; then
  echo "FAIL: a token appears in:"
  # The file and the field, with the token cut out of what is printed.
  grep -r -a -o -F -e "$tok_prom" -e "$tok_kube" -e "$tok_kube_file" "$out" | sort | uniq -c |
    sed -e "s/$tok_prom/<prom-token>/" -e "s/$tok_kube_file/<kube-token-file>/" \
      -e "s/$tok_kube/<kube-token>/"
  exit 1
fi
itest_stop_pid "$echo_pid" 5
itest_assert_no_leftovers || fail "processes left behind"
echo "PASS: secret_leak ($files outputs grepped for 3 tokens)"
