# shellcheck shell=bash
# The elastic training job (examples/elastic/train.py under torchrun agents) as aiscale runs it
# in the integration tests and in examples/elastic/measure.sh and throughput.sh: one place that
# writes its controller config and its agent command line (bash; source it, do not run it).
#
#   elastic_agent_args KEY=VALUE... [-- TRAIN_ARGS...]
#       prints one torchrun agent's argv, one word per line: /usr/bin/python3, the torchrun
#       wrapper, the rendezvous options, train.py and its arguments. Keys:
#         rdzv=PORT id=RDZV_ID ckpt=DIR metrics=PORT (required)
#         nnodes=1:3  max_restarts=1000 (empty: torchrun's default)
#         host='{rdzv_is_host}' (the rendezvous-host flag, substituted per replica by the engine)
#       TRAIN_ARGS follow train.py's own options (--events FILE, --epochs N, ...).
#   elastic_yaml_list           stdin words (one per line) as a YAML flow list, each quoted
#   elastic_shell_words         stdin words (one per line) as one shell-quoted command line
#   elastic_config FILE KEY=VALUE...
#       writes a ControllerConfig with one TrainingJob workload `elastic` run by the local
#       engine in torchrun mode (replica 0 hosts the rendezvous; pre-stop checkpoint request).
#       Ports: rendezvous base, rank 0's metrics base+1, aiscale's API base+2. Under dir: the
#       store (store.db), the job's checkpoints (ckpt/), events log (events.jsonl), the agents'
#       logs (logs/) and pid records (run/). Keys:
#         dir=DIR base=PORT policy='{name: ...}' (required)
#         name=elastic-itest period=5s window=15s min=1 max=3 id=elastic backoff_max=10s
#         job='--epochs 20 ...' (train.py arguments after --events, whitespace-separated)
#
# Requires ELASTIC_DIR (examples/elastic) or derives it from this file's location.

ELASTIC_DIR=${ELASTIC_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../examples/elastic" && pwd)}

# _elastic_set FN ALLOWED KEY=VALUE: sets the caller's local KEY (bash scoping is dynamic) when
# KEY is one of ALLOWED; an unknown key is an error naming FN.
_elastic_set() {
  local fn=$1 allowed=$2 kv=$3 key=${3%%=*}
  if [[ $kv != *=* || " $allowed " != *" $key "* ]]; then
    echo "$fn: unknown option '$kv' (known: $allowed)" >&2
    return 1
  fi
  printf -v "$key" '%s' "${kv#*=}"
}

elastic_agent_args() {
  local rdzv="" id="" ckpt="" metrics="" nnodes=1:3 max_restarts=1000 host='{rdzv_is_host}'
  while (($#)); do
    [ "$1" = -- ] && { shift; break; }
    _elastic_set elastic_agent_args "rdzv id ckpt metrics nnodes max_restarts host" "$1" || return 1
    shift
  done
  if [ -z "$rdzv" ] || [ -z "$id" ] || [ -z "$ckpt" ] || [ -z "$metrics" ]; then
    echo "elastic_agent_args: rdzv, id, ckpt and metrics are required" >&2
    return 1
  fi
  printf '%s\n' /usr/bin/python3 "$ELASTIC_DIR/torchrun.py" "--nnodes=$nnodes" --nproc_per_node=1 \
    --rdzv_backend=c10d "--rdzv_endpoint=127.0.0.1:$rdzv" "--rdzv_id=$id" \
    "--rdzv_conf=last_call_timeout=2,is_host=$host" --monitor_interval=1
  [ -n "$max_restarts" ] && printf '%s\n' "--max_restarts=$max_restarts"
  printf '%s\n' "$ELASTIC_DIR/train.py" --ckpt-dir "$ckpt" --metrics-port "$metrics" "$@"
}

elastic_yaml_list() {
  local word out="" sq="'"
  while IFS= read -r word; do
    out+="${out:+, }'${word//$sq/$sq$sq}'"
  done
  printf '[%s]\n' "$out"
}

elastic_shell_words() {
  local word out=""
  while IFS= read -r word; do
    out+="${out:+ }$(printf '%q' "$word")"
  done
  printf '%s\n' "$out"
}

elastic_config() {
  local file=$1
  shift
  local dir="" base="" policy="" name=elastic-itest period=5s window=15s min=1 max=3 id=elastic
  local backoff_max=10s job=""
  while (($#)); do
    _elastic_set elastic_config "dir base policy name period window min max id backoff_max job" \
      "$1" || return 1
    shift
  done
  if [ -z "$dir" ] || [ -z "$base" ] || [ -z "$policy" ]; then
    echo "elastic_config: dir, base and policy are required" >&2
    return 1
  fi
  local metrics=$((base + 1)) command job_words=()
  read -r -a job_words <<<"${job//$'\n'/ }"
  command=$(elastic_agent_args rdzv="$base" id="$id" ckpt="$dir/ckpt" metrics="$metrics" -- \
    --events "$dir/events.jsonl" "${job_words[@]}" | elastic_yaml_list) || return 1
  mkdir -p "$dir/logs" "$dir/run"
  cat >"$file" <<EOF
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
metadata: {name: $name}
spec:
  period: $period
  store: $dir/store.db
  server: {host: 127.0.0.1, port: $((base + 2))}
  sources:
    - {name: job, type: scrape, preset: training, targets: ['http://127.0.0.1:$metrics/metrics'],
       timeout: 2s, window: $window}
  workloads:
    - name: elastic
      kind: TrainingJob
      min_replicas: $min
      max_replicas: $max
      policy: $policy
      signals:
        - {name: samples_per_s, source: job}
        - {name: samples_remaining, source: job}
        - {name: phase, source: job}
        - {name: epoch, source: job}
      target:
        engine: local
        command: $command
        rendezvous_host_replica: 0
        readiness: {log: 'aiscale-elastic: worker'}   # its worker joined a rendezvous
        ready_timeout: 120s
        env: {OMP_NUM_THREADS: '1'}
        pre_stop:
          command: ['/usr/bin/python3', '$ELASTIC_DIR/request_checkpoint.py',
                    '--url', 'http://127.0.0.1:$metrics', '--timeout', '20']
          timeout: 25s
        grace_period: 40s          # torchrun gives its workers 30 s after SIGTERM
        restart_backoff: {initial: 2s, max: $backoff_max}
        log_dir: $dir/logs
        run_dir: $dir/run
EOF
}
