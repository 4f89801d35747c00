# shellcheck shell=bash
# A real Slurm cluster on this host for integration tests (bash; source it): one slurmctld and
# N slurmd (`slurmd -N nodeI`, each on its own port), Debian 12's slurm-wlm 22.05, no munged
# (auth/none, cred/none), no systemd: every daemon runs in the foreground (-D) under
# itest_spawn, so it is stopped by PID. Sources common.sh; call itest_init first.
#
#   slurm_available          true when slurmctld, slurmd, squeue, sinfo, sbatch, scancel exist
#   slurm_start DIR N        writes DIR/slurm.conf (ports from free_ports; nodes node1..nodeN,
#                            CPUs=1 each, partition "debug"; with SLURM_GPUS_PER_NODE set (1-5),
#                            that many gres GPUs each), starts slurmctld and N slurmd,
#                            waits (60 s) until sinfo shows N idle nodes. Exports SLURM_CONF;
#                            sets SLURM_DIR, SLURM_CTLD_PID.
#   slurm_itest N            a test's start: SKIP (exit 0) without Slurm, else itest_init, an
#                            EXIT trap that stops Slurm and cleans up, slurm_start with N nodes
#                            in $ITEST_TMP/slurm (itest_fail when it does not start)
#   slurm_stop_ctld          SIGTERM to slurmctld by PID (its state is saved in DIR/state)
#   slurm_start_ctld         starts slurmctld again (recovering the saved jobs), waits for it
#   slurm_active_jobs [NAME] "id state node comment" per PENDING/RUNNING job (of job NAME)
#   slurm_stop               cancels every job, stops slurmd and slurmctld by PID, waits for
#                            the job processes to go (they carry the itest marker)

# shellcheck source=tests/integration/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SLURM_PIDS=()

slurm_available() {
  local c
  for c in slurmctld slurmd squeue sinfo sbatch scancel; do
    command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || return 1
  done
}

slurm_bin() {
  command -v "$1" 2>/dev/null || echo "/usr/sbin/$1"
}

slurm_write_conf() {
  local dir=$1 n=$2 i
  local -a ports
  read -r -a ports <<<"$(free_ports $((n + 2)))"
  local user host
  user=$(id -un)
  host=$(hostname -s)
  mkdir -p "$dir/state" "$dir/log"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=itest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
AuthType=auth/none
CredType=cred/none
SlurmUser=$user
SlurmdUser=$user
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MessageTimeout=2
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=30
KillWait=5
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  local gres=""
  if [ -n "${SLURM_GPUS_PER_NODE:-}" ]; then
    # Nothing here has a GPU, and slurmd drops a gres/gpu without device files ("Removing
    # file-less GPU"): stand-in character devices play them (at most 5; task/none binds none).
    # aiscale's pool reads the counts from sinfo.
    local -a devs=(/dev/null /dev/zero /dev/full /dev/urandom /dev/random)
    local files
    files=$(IFS=,; echo "${devs[*]:0:$SLURM_GPUS_PER_NODE}")
    echo "GresTypes=gpu" >>"$dir/slurm.conf"
    printf "AutoDetect=off\nName=gpu File=%s\n" "$files" >"$dir/gres.conf"
    gres=" Gres=gpu:$SLURM_GPUS_PER_NODE"
  fi
  for ((i = 1; i <= n; i++)); do
    mkdir -p "$dir/spool/node$i"
    echo "NodeName=node$i NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[i + 1]} CPUs=1$gres State=UNKNOWN" \
      >>"$dir/slurm.conf"
  done
}

slurm_wait_ctld() {
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    squeue -h -o %i >/dev/null 2>&1 && return 0
    pid_alive "$SLURM_CTLD_PID" || { echo "slurm: slurmctld exited" >&2; return 1; }
    sleep 0.2
  done
  echo "slurm: slurmctld did not answer within 30 s" >&2
  return 1
}

slurm_start_ctld() {
  itest_spawn "slurmctld${SLURM_CTLD_PID:+-again}" "$(slurm_bin slurmctld)" -D -i
  SLURM_CTLD_PID=$ITEST_LAST_PID
  SLURM_PIDS+=("$SLURM_CTLD_PID")
  slurm_wait_ctld
}

slurm_stop_ctld() {
  itest_stop_pid "$SLURM_CTLD_PID" 10
}

slurm_start() {
  local dir=$1 n=$2 i idle
  SLURM_DIR=$dir
  slurm_write_conf "$dir" "$n"
  export SLURM_CONF=$dir/slurm.conf
  slurm_start_ctld || return 1
  for ((i = 1; i <= n; i++)); do
    itest_spawn "slurmd-node$i" "$(slurm_bin slurmd)" -D -N "node$i"
    SLURM_PIDS+=("$ITEST_LAST_PID")
  done
  local deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
    [ "$idle" -eq "$n" ] && return 0
    sleep 0.3
  done
  echo "slurm: $idle of $n nodes idle after 60 s:" >&2
  sinfo -N >&2
  return 1
}

slurm_active_jobs() {
  local name=${1:-}
  local -a filter=()
  [ -n "$name" ] && filter=(-n "$name")
  squeue -h -t PENDING,RUNNING "${filter[@]}" -o '%i %T %N %k' 2>/dev/null | sort -n
}

slurm_stop() {
  local i
  [ -n "${SLURM_CONF:-}" ] || return 0
  if pid_alive "${SLURM_CTLD_PID:-0}"; then
    scancel --user="$(id -un)" 2>/dev/null
    local deadline=$((SECONDS + 15))
    while ((SECONDS < deadline)) && [ -n "$(slurm_active_jobs)" ]; do sleep 0.3; done
  fi
  # The slurmd first: one that loses its slurmctld first retries it before exiting.
  for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
    [ "${SLURM_PIDS[i]}" = "${SLURM_CTLD_PID:-}" ] || itest_stop_pid "${SLURM_PIDS[i]}" 10
  done
  itest_stop_pid "${SLURM_CTLD_PID:-0}" 10
  SLURM_PIDS=()
}

slurm_itest() {
  if ! slurm_available; then
    echo "SKIP: Slurm is not installed (apt-get install slurm-wlm; scripts/bootstrap.sh does)"
    exit 0
  fi
  itest_init
  trap 'slurm_stop; itest_cleanup; rm -rf "$ITEST_TMP"' EXIT
  slurm_start "$ITEST_TMP/slurm" "$1" || itest_fail "the Slurm cluster did not start"
}
