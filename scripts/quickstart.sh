#!/usr/bin/env bash
# The live quick start: aiscale scaling real processes on this machine, from real metrics.
#
# Starts, all on 127.0.0.1 and all stopped again on exit (Ctrl-C too):
#   - Prometheus (Debian's /usr/bin/prometheus), scraping the `chat` replicas every 2 s;
#   - `aiscale run` on examples/live-local.yaml, which starts the example replicas itself
#     (tests/integration/tools/model_server.py, a stand-in for vLLM with vLLM's metric names)
#     and scales `chat` by the Kubernetes HPA algorithm on requests in flight per replica;
#   - a round-robin balancer over chat's ready replicas (what a Kubernetes Service does), so
#     load reaches every replica, not only the first;
#   - a load generator through the balancer: light, then heavy until chat has scaled up and
#     every replica is ready, then light again until it has scaled back down.
# It prints what to look at, one line every 10 s with chat's replicas, and a summary.
#
#   bash scripts/quickstart.sh          # 2-4 minutes; exit 0 when chat scaled up and back down
#
# Environment: AISCALE (the binary; default: `aiscale` on PATH, else build/aiscale),
# QUICKSTART_DIR (logs, store, generated configs; default /tmp/aiscale-quickstart),
# QUICKSTART_PORTS="API PROMETHEUS CHAT EMBED BALANCER" when the defaults
# (9464 19090 18100 18200 18080) are taken; QUICKSTART_HEAVY_RATE (requests/s, default 5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/tests/integration/tools
dir=${QUICKSTART_DIR:-/tmp/aiscale-quickstart}
read -r api_port prom_port chat_port embed_port lb_port <<<"${QUICKSTART_PORTS:-9464 19090 18100 18200 18080}"
heavy_rate=${QUICKSTART_HEAVY_RATE:-5}
aiscale=${AISCALE:-$(command -v aiscale || echo "$root/build/aiscale")}
api=http://127.0.0.1:$api_port

say() { printf 'quickstart: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }
[ -x "$aiscale" ] || die "no aiscale binary at $aiscale: run 'bash scripts/bootstrap.sh demo' first"
[ -x /usr/bin/prometheus ] || die "/usr/bin/prometheus missing: apt-get install prometheus"
command -v python3 >/dev/null || die "python3 missing: apt-get install python3"
for p in "$api_port" "$prom_port" "$chat_port" "$embed_port" "$lb_port"; do
  if python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$p))!=0)"; then
    die "port $p is in use; set QUICKSTART_PORTS=\"API PROMETHEUS CHAT EMBED BALANCER\""
  fi
done

# Everything we start is in this list; on exit each is stopped by its pid, aiscale first (it
# stops the replicas it started).
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$dir" && mkdir -p "$dir/prometheus"
# examples/live-local.yaml with this run's ports, store and absolute replica script path.
sed -e "s#http://127.0.0.1:19090#http://127.0.0.1:$prom_port#" \
    -e "s#port: 9464#port: $api_port#" \
    -e "s#base_port: 18100#base_port: $chat_port#" \
    -e "s#base_port: 18200#base_port: $embed_port#" \
    -e "s#/tmp/aiscale-live-local/store.db#$dir/store.db#" \
    -e "s#\.\./tests/integration/tools/model_server.py#$tools/model_server.py#" \
    "$root/examples/live-local.yaml" >"$dir/live-local.yaml"
chat_targets=""
backends=""
for i in 0 1 2 3; do
  chat_targets+="${chat_targets:+, }'127.0.0.1:$((chat_port + i))'"
  backends+="127.0.0.1:$((chat_port + i))"$'\n'
done
printf '%s' "$backends" >"$dir/backends.txt"
cat >"$dir/prometheus/prometheus.yml" <<EOF
global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s}
scrape_configs:
  - job_name: static        # the job examples/live-local.yaml's query selects
    static_configs: [{targets: [$chat_targets]}]
EOF

/usr/bin/prometheus --config.file="$dir/prometheus/prometheus.yml" \
  --storage.tsdb.path="$dir/prometheus/data" --web.listen-address="127.0.0.1:$prom_port" \
  >"$dir/prometheus.log" 2>&1 &
pids+=($!)
"$aiscale" run -c "$dir/live-local.yaml" --verbose >"$dir/aiscale.log" 2>&1 &
pids=("$!" "${pids[@]}")
python3 "$tools/balancer.py" --port "$lb_port" --backends-file "$dir/backends.txt" \
  >"$dir/balancer.log" 2>&1 &
pids+=($!)

# chat's "desired ready" from the API, or nothing while the API is not up.
chat_state() {
  curl -fsS --max-time 2 "$api/api/v1/workloads/chat" 2>/dev/null | python3 -c '
import json, sys
w = json.load(sys.stdin)
print(int(w["desired"]), int(w["ready"]))' 2>/dev/null || true
}
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every second
  local limit=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || die "$what: not within $limit s (logs in $dir)"
    sleep 1
  done
}
wait_for 60 "aiscale's API on $api" curl -fsS --max-time 2 -o /dev/null "$api/readyz"
wait_for 60 "Prometheus on 127.0.0.1:$prom_port" \
  curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$prom_port/-/ready"
wait_for 60 "the balancer" curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$lb_port/_balancer/stats"

cat <<EOF

aiscale is running: 'chat' is scaled by the HPA algorithm on requests in flight (target 1.5
per replica, 1 to 4 replicas, scale-down window 60 s) read from Prometheus; 'embed' reads its
replicas' /metrics directly. Load goes through a balancer on 127.0.0.1:$lb_port.

While it runs, look at (in another shell):
EOF
look() { printf '  %-58s # %s\n' "$1" "$2"; }
look "$aiscale explain chat --url $api" "chat's last decisions, in words"
look "curl -s $api/api/v1/workloads" "every workload's state, as JSON"
look "curl -s $api/metrics | grep _replicas" "desired/current/ready, for Prometheus"
look "http://127.0.0.1:$prom_port/graph?g0.expr=vllm:num_requests_running" "the signal, in a browser"
look "tail -f $dir/aiscale.log" "one line per decision"
echo "Logs, store and generated configs: $dir"
echo

# Prints chat's replicas every 10 s until the loadgen with pid $1 exits; records the extremes.
max_seen=0
last_desired=0
last_ready=0
watch_chat() {
  local next=$SECONDS state
  while kill -0 "$1" 2>/dev/null; do
    if [ $SECONDS -ge $next ]; then
      state=$(chat_state)
      if [ -n "$state" ]; then
        read -r last_desired last_ready <<<"$state"
        [ "$last_desired" -gt "$max_seen" ] && max_seen=$last_desired
        say "t=${SECONDS}s chat desired=$last_desired ready=$last_ready"
      fi
      next=$((SECONDS + 10))
    fi
    sleep 1
  done
}
# Runs load at RATE/s until CONDITION holds (checked every 5 s) or LIMIT s pass.
load_until() {
  local name=$1 rate=$2 limit=$3 condition=$4 lg
  python3 "$tools/loadgen.py" --url "http://127.0.0.1:$lb_port/v1/completions" \
    --schedule "${limit}s@$rate" --timeout 90 --drain 90 --out "$dir/load-$name.json" \
    >"$dir/load-$name.log" 2>&1 &
  lg=$!
  pids+=("$lg")
  # Checks the condition every 5 s and stops the load when it holds; ends within a second of
  # the load generator, and is waited for, so nothing of ours outlives the script.
  (
    n=0
    while kill -0 "$lg" 2>/dev/null; do
      sleep 1
      n=$((n + 1))
      if [ $((n % 5)) = 0 ] && eval "$condition"; then kill -INT "$lg" 2>/dev/null || true; fi
    done
  ) &
  local stopper=$!
  watch_chat "$lg"
  wait "$lg" 2>/dev/null || true
  wait "$stopper" 2>/dev/null || true
}
scaled_up() { read -r d r <<<"$(chat_state)"; [ "${d:-0}" -ge 4 ] && [ "${r:-0}" -ge 4 ]; }
scaled_down() { read -r d r <<<"$(chat_state)"; [ "${d:-9}" -le 1 ] && [ "${r:-9}" -le 1 ]; }

say "light load (0.5 requests/s) for 20 s"
load_until light 0.5 20 false
say "heavy load ($heavy_rate requests/s) until chat runs 4 ready replicas (at most 150 s)"
load_until heavy "$heavy_rate" 150 scaled_up
up=$max_seen
say "light load (0.3 requests/s) until chat is back at 1 replica (at most 180 s)"
load_until cooldown 0.3 180 scaled_down

summary=$(python3 - "$dir" <<'EOF'
import json, sys, os
ok = sent = 0
replicas = set()
for name in ("light", "heavy", "cooldown"):
    p = os.path.join(sys.argv[1], "load-%s.json" % name)
    if not os.path.exists(p):
        continue
    s = json.load(open(p)).get("total", {})
    ok += s.get("ok", 0)
    sent += s.get("sent", 0)
    replicas.update(str(r) for r in (s.get("replicas") or {}))
print(ok, sent, len(replicas))
EOF
)
read -r ok sent answered_by <<<"$summary"
say "summary: chat scaled 1 -> $up -> $last_desired replicas; $ok of $sent requests answered OK," \
  "by $answered_by different replicas"
[ "$up" -ge 3 ] || die "chat did not scale up (max $up replicas); see $dir/aiscale.log"
[ "$last_desired" -lt "$up" ] || die "chat did not scale back down; see $dir/aiscale.log"
if [ "$sent" -eq 0 ] || [ $((ok * 100)) -lt $((sent * 95)) ]; then
  die "only $ok of $sent requests answered OK; see $dir/load-*.log"
fi
say "done: chat scaled up under load and back down after it, every replica serving."
