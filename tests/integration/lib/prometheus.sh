# shellcheck shell=bash
# A real Prometheus (Debian's /usr/bin/prometheus, 2.42) for integration tests (bash; source it).
# Sources common.sh (free_port, itest_* process bookkeeping); call itest_init first.
#
#   prom_start WORKDIR PORT [TARGETS]
#       Writes WORKDIR/prometheus.yml (scrape and evaluation every 1s) and starts Prometheus on
#       127.0.0.1:PORT with its TSDB in WORKDIR/data and its log in WORKDIR/prometheus.log;
#       waits (60s at most) for /-/ready. TARGETS is one of:
#         - a JSON list of file_sd target groups, e.g.
#           '[{"targets":["127.0.0.1:8001"],"labels":{"job":"vllm"}}]' (a "job" label names the
#           job): written to WORKDIR/targets.json, which prom_set_targets rewrites later;
#         - a path to a complete prometheus.yml, used as it is;
#         - host:port words (space or comma separated): a static job named "static";
#         - nothing: no target yet (the file_sd job reads an empty targets.json).
#       Sets PROM_PID, PROM_PORT, PROM_URL, PROM_DIR. Fails with the log's tail.
#   prom_set_targets JSON     replaces WORKDIR/targets.json atomically. Prometheus rereads it
#                             at once (fsnotify; refresh_interval 1s) but its discovery manager
#                             hands changes to the scrapers at most every 5 s: allow ~6 s
#                             before a new target's first sample (measured: 5 s).
#   prom_query PORT EXPR      prints one line per series ('{labels} value'); 1 when empty
#   prom_wait_sample PORT EXPR [TIMEOUT_S]   polls until EXPR has a result (30s by default)
#   prom_range PORT EXPR SINCE_S [AGG]       max (or min|last|count) over the last SINCE_S s
#   prom_targets PORT         one line per active target: job instance health last_error
#   prom_stop                 SIGTERM by PID, waits (10s, then SIGKILL)

# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PROM_BIN=${PROM_BIN:-/usr/bin/prometheus}

prom_write_config() {
  local dir=$1 static=$2
  {
    cat <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: file_sd
    file_sd_configs:
      - files: ["$dir/targets.json"]
        refresh_interval: 1s
EOF
    if [ -n "$static" ]; then
      echo "  - job_name: static"
      echo "    static_configs:"
      echo "      - targets: [$static]"
    fi
  } >"$dir/prometheus.yml"
}

prom_set_targets() {
  local json=$1 dir=${PROM_DIR:?prom_set_targets: prom_start first}
  printf '%s\n' "$json" >"$dir/targets.json.tmp" && mv -f "$dir/targets.json.tmp" "$dir/targets.json"
}

prom_start() {
  local dir=$1 port=$2 targets=${3:-} static="" w
  [ -x "$PROM_BIN" ] || { echo "prom_start: $PROM_BIN not found" >&2; return 1; }
  mkdir -p "$dir/data" || return 1
  PROM_DIR=$(cd "$dir" && pwd)
  printf '[]\n' >"$PROM_DIR/targets.json"
  case "${targets#"${targets%%[![:space:]]*}"}" in # leading blanks do not count
    '['*) prom_set_targets "$targets" ;;
    *.yml | *.yaml) cp "$targets" "$PROM_DIR/prometheus.yml" || return 1 ;;
    *)
      for w in ${targets//,/ }; do static+="${static:+, }\"$w\""; done
      ;;
  esac
  case "$targets" in *.yml | *.yaml) ;; *) prom_write_config "$PROM_DIR" "$static" ;; esac
  "$PROM_BIN" --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
    --web.listen-address="127.0.0.1:$port" --web.enable-lifecycle \
    --storage.tsdb.retention.time=1d >"$PROM_DIR/prometheus.log" 2>&1 &
  PROM_PID=$!
  # shellcheck disable=SC2034 # for the caller
  PROM_PORT=$port
  PROM_URL="http://127.0.0.1:$port"
  itest_track "$PROM_PID"
  local deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    if [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$PROM_URL/-/ready")" = 200 ]; then
      return 0
    fi
    if ! pid_alive "$PROM_PID"; then
      echo "prom_start: prometheus exited; log tail:" >&2
      tail -n 30 "$PROM_DIR/prometheus.log" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "prom_start: not ready after 60s; log tail:" >&2
  tail -n 30 "$PROM_DIR/prometheus.log" >&2
  return 1
}

prom_query() {
  "$ITEST_PY" "$ITEST_TOOLS/prom_query.py" --url "http://127.0.0.1:$1" query "$2"
}

prom_wait_sample() {
  local port=$1 expr=$2 timeout=${3:-30}
  if "$ITEST_PY" "$ITEST_TOOLS/prom_query.py" --url "http://127.0.0.1:$port" query "$expr" \
    --wait "$timeout" >/dev/null; then
    return 0
  fi
  echo "prom_wait_sample: no sample for '$expr' after ${timeout}s; targets:" >&2
  prom_targets "$port" >&2
  return 1
}

prom_range() {
  "$ITEST_PY" "$ITEST_TOOLS/prom_query.py" --url "http://127.0.0.1:$1" range "$2" \
    --since "$3" --agg "${4:-max}"
}

prom_targets() {
  "$ITEST_PY" "$ITEST_TOOLS/prom_query.py" --url "http://127.0.0.1:$1" targets
}

prom_stop() {
  [ -n "${PROM_PID:-}" ] || return 0
  itest_stop_pid "$PROM_PID" 10
  PROM_PID=
}
