# shellcheck shell=bash
# A small live setup for the operator tests (status, steering, dashboard): `aiscale run` with
# real local replica processes of the project's model server (vLLM metric names), scraped
# directly (no Prometheus), and a bearer token for the steering endpoints. Source after
# common.sh and itest_init.
#
#   op_write_config FILE API_PORT BASE_CHAT BASE_STEADY [MAX_STEADY]   the ControllerConfig
#   op_start NAME                 starts aiscale on $ITEST_TMP/live.yaml, waits for /readyz
#   op_get PATH                   GET from the API
#   op_field WORKLOAD KEY         one field of /api/v1/workloads/WORKLOAD (-1 when absent)
#   op_wait_field WORKLOAD KEY VALUE TIMEOUT_S   polls until the field equals VALUE
#
# Workloads: chat (hpa on concurrency, 1..4) and steady (static 2, bounds 1..MAX_STEADY).

op_write_config() {
  local file=$1 api=$2 base_chat=$3 base_steady=$4 max_steady=${5:-4}
  local py=$ITEST_PY tools=$ITEST_TOOLS
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$ITEST_TMP/api.token"
  chmod 600 "$ITEST_TMP/api.token"
  cat >"$file" <<YAML
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
spec:
  period: 1s
  store: {path: $ITEST_TMP/store.db, heartbeat: 0}
  server: {host: 127.0.0.1, port: $api, token_file: $ITEST_TMP/api.token}
  sources:
    - {name: replicas, type: scrape, preset: vllm, targets: replicas, timeout: 1s}
  workloads:
    - name: chat
      kind: InferenceService
      min_replicas: 1
      max_replicas: 4
      policy:
        name: hpa
        metrics: [{signal: concurrency, type: Pods, target: {type: AverageValue, value: 2}}]
      signals: [{name: concurrency, source: replicas}]
      target:
        engine: local
        command: ["$py", "$tools/model_server.py", "--port", "{port}", "--replica", "{replica}",
                  "--delay", "0.2", "--ready-after", "0.5"]
        base_port: $base_chat
        readiness: {http: /health}
        grace_period: 2s
    - name: steady
      kind: InferenceService
      min_replicas: 1
      max_replicas: $max_steady
      policy: {name: static, replicas: 2}
      target:
        engine: local
        command: ["$py", "$tools/model_server.py", "--port", "{port}", "--replica", "{replica}",
                  "--delay", "0.2", "--ready-after", "0.5"]
        base_port: $base_steady
        readiness: {http: /health}
        grace_period: 2s
YAML
}

op_start() {
  itest_spawn "$1" "$OP_AISCALE" run -c "$ITEST_TMP/live.yaml"
  OP_PID=$ITEST_LAST_PID
  wait_http "http://127.0.0.1:$OP_API/readyz" 30 200 || itest_fail "aiscale ($1) never became ready"
}

op_get() { curl -s --max-time 5 "http://127.0.0.1:$OP_API$1"; }

op_field() {
  op_get "/api/v1/workloads/$1" |
    "$ITEST_PY" -c "import json,sys; v=json.load(sys.stdin).get('$2', -1); print(json.dumps(v) if isinstance(v, (dict, list)) else v)" 2>/dev/null ||
    echo -1
}

op_wait_field() {
  local deadline=$((SECONDS + $4))
  while ((SECONDS < deadline)); do
    [ "$(op_field "$1" "$2")" = "$3" ] && return 0
    sleep 0.3
  done
  echo "op_wait_field: $1 $2 is $(op_field "$1" "$2"), not $3, after $4 s" >&2
  return 1
}
