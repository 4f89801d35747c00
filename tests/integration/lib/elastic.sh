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
#         engine=local|slurm (slurm: one batch job per agent, DIR/agent.sbatch; partition=debug)
#         heartbeat=0 (the store keeps every decision; default: the store's own heartbeat)
#
#   elastic_wait FILE STALL_S CAP_S PID CMD...
#       runs CMD every second until it succeeds. Fails when FILE (the job's events log) has not
#       grown for STALL_S seconds since it appeared, PID (aiscale) died, or CAP_S seconds
#       passed: the bound follows the job's own progress, so a busy machine makes a test slower,
#       not failed (before the job's first event only CAP_S applies).
#
# Requires ELASTIC_DIR (examples/elastic) or derives it from this file's location.

# Ends the calling test with a SKIP line (exit 0, as the other integration tests skip) when
# /usr/bin/python3 cannot import torch.
elastic_require_torch() {
  if ! /usr/bin/python3 -c 'import torch.distributed.run' 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 cannot import torch (apt-get install python3-torch)"
    exit 0
  fi
}

elastic_wait() {
  local file=$1 stall=$2 cap=$3 pid=$4 size=-1 now_size
  shift 4
  local start=$SECONDS since=$SECONDS
  until "$@"; do
    kill -0 "$pid" 2>/dev/null || return 1
    ((SECONDS - start > cap)) && return 1
    now_size=$(stat -c %s "$file" 2>/dev/null || echo none)
    if [ "$now_size" = none ]; then
      since=$SECONDS
    elif [ "$now_size" != "$size" ]; then
      size=$now_size
      since=$SECONDS
    elif ((SECONDS - since > stall)); then
      return 1
    fi
    sleep 1
  done
}

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
  # Single quotes, not printf %q: a template's {rdzv_is_host} must stay as written for the
  # engine to substitute it.
  local word out="" sq="'" plain='^[A-Za-z0-9_./:=,+@%-]+$'
  while IFS= read -r word; do
    [[ $word =~ $plain ]] || word="'${word//$sq/$sq\\$sq$sq}'"
    out+="${out:+ }$word"
  done
  printf '%s\n' "$out"
}

# The pre-stop hook's argv (YAML): ask rank 0 for a checkpoint, wait for the acknowledgement.
_elastic_pre_stop() {
  printf '%s' "['/usr/bin/python3', '$ELASTIC_DIR/request_checkpoint.py',
                    '--url', 'http://127.0.0.1:$1', '--timeout', '20']"
}

# _elastic_local_target DIR METRICS COMMAND_YAML BACKOFF_MAX: the local engine's target block.
_elastic_local_target() {
  cat <<EOF
      target:
        engine: local
        command: $3
        rendezvous_host_replica: 0
        readiness: {log: 'aiscale-elastic: worker'}   # its worker joined a rendezvous
        ready_timeout: 300s        # torch imports take minutes on a busy machine
        env: {OMP_NUM_THREADS: '1'}
        pre_stop:
          command: $(_elastic_pre_stop "$2")
          timeout: 25s
        grace_period: 40s          # torchrun gives its workers 30 s after SIGTERM
        restart_backoff: {initial: 2s, max: $4}
        log_dir: $1/logs
        run_dir: $1/run
EOF
}

# _elastic_slurm_target DIR METRICS COMMAND_WORDS PARTITION: writes DIR/agent.sbatch (one
# torchrun agent per batch job) and prints the Slurm engine's target block.
_elastic_slurm_target() {
  cat >"$1/agent.sbatch" <<EOF
#!/bin/bash
# torchrun agent {replica} of {workload}: replica 0 hosts the rendezvous (is_host={rdzv_is_host})
export OMP_NUM_THREADS=1
exec $3
EOF
  cat <<EOF
      target:
        engine: slurm
        script: $1/agent.sbatch
        partition: $4
        rendezvous_host_replica: 0
        pre_stop:
          command: $(_elastic_pre_stop "$2")
          timeout: 25s
        grace_period: 40s          # torchrun gives its workers 30 s after SIGTERM
        poll_interval: 1s
        sbatch_args: ['--output=$1/logs/agent-%j.log', '--chdir=$1']
        run_dir: $1/run
EOF
}

elastic_config() {
  local file=$1
  shift
  local dir="" base="" policy="" name=elastic-itest period=5s window=15s min=1 max=3 id=elastic
  local backoff_max=10s job="" engine=local partition=debug heartbeat=""
  while (($#)); do
    _elastic_set elastic_config \
      "dir base policy name period window min max id backoff_max job engine partition heartbeat" \
      "$1" || return 1
    shift
  done
  if [ -z "$dir" ] || [ -z "$base" ] || [ -z "$policy" ]; then
    echo "elastic_config: dir, base and policy are required" >&2
    return 1
  fi
  local metrics=$((base + 1)) words target job_words=() store=$dir/store.db
  [ -n "$heartbeat" ] && store="{path: $dir/store.db, heartbeat: $heartbeat}"
  read -r -a job_words <<<"${job//$'\n'/ }"
  words=$(elastic_agent_args rdzv="$base" id="$id" ckpt="$dir/ckpt" metrics="$metrics" -- \
    --events "$dir/events.jsonl" "${job_words[@]}") || return 1
  mkdir -p "$dir/logs" "$dir/run"
  case $engine in
    local)
      target=$(_elastic_local_target "$dir" "$metrics" "$(elastic_yaml_list <<<"$words")" \
        "$backoff_max")
      ;;
    slurm)
      target=$(_elastic_slurm_target "$dir" "$metrics" "$(elastic_shell_words <<<"$words")" \
        "$partition")
      ;;
    *)
      echo "elastic_config: engine must be local or slurm, not '$engine'" >&2
      return 1
      ;;
  esac
  cat >"$file" <<EOF
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
metadata: {name: $name}
spec:
  period: $period
  store: $store
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
$target
EOF
}
