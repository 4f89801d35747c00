# shellcheck shell=bash
# Process bookkeeping for integration tests (bash; source it, do not run it).
#
# Every process a test starts is stopped by PID at the end, including the ones its children
# start (replicas an actuator launches): itest_init exports a marker variable that every
# descendant inherits, so the leftovers are found by that marker, never by a name.
#
#   itest_init                  marker, work dir ($ITEST_TMP), EXIT trap running itest_cleanup
#   free_port / free_ports N    unused TCP port(s) on 127.0.0.1 (asks the kernel)
#   port_block N                first of N consecutive free ports below the kernel's ephemeral
#                               range (a client's outgoing socket can never take one of them)
#   itest_spawn NAME CMD...     starts CMD in the background, stdout+stderr to
#                               $ITEST_TMP/NAME.log; sets ITEST_LAST_PID; tracks the PID
#   itest_track PID             tracks a PID started otherwise
#   wait_log_line FILE REGEX [TIMEOUT_S [PID]]  waits for a matching line (fails early if PID dies)
#   wait_http URL [TIMEOUT_S [CODE]]            waits until URL answers CODE (200)
#   itest_stop_pid PID [GRACE_S]                TERM, wait, then KILL
#   itest_cleanup                stops tracked PIDs (newest first), then marked leftovers
#   itest_leftovers              prints PIDs still alive (tracked or marked), one per line
#   itest_assert_no_leftovers    fails (and names them) if any are alive
#   itest_fail MSG               prints "FAIL: MSG" and the tail of every log, exits 1
#   check NAME CMD...            a named assertion: prints ok/not ok, counts $passed / $failed;
#                                with ITEST_FAIL_FAST=1 a failed one is itest_fail (later checks
#                                would only fail for the same cause)
#
# Requires /usr/bin/python3. Keep the functions bounded: none waits without a timeout.

ITEST_PY=${ITEST_PY:-/usr/bin/python3}
ITEST_TOOLS=${ITEST_TOOLS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools" && pwd)}
ITEST_PIDS=()
passed=0
failed=0

check() {
  local name=$1
  shift
  if "$@"; then
    echo "ok: $name"
    passed=$((passed + 1))
  elif [ "${ITEST_FAIL_FAST:-0}" = 1 ]; then
    itest_fail "$name"
  else
    echo "not ok: $name"
    failed=$((failed + 1))
  fi
}

itest_init() {
  ITEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/itest.XXXXXX")
  ITEST_MARK="itest-$$-$(date +%s%N)"
  export AISCALE_ITEST_MARK="$ITEST_MARK"
  trap 'itest_cleanup; rm -rf "$ITEST_TMP"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

free_ports() {
  # Holds all N sockets open at once, so the N ports differ.
  "$ITEST_PY" - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

free_port() {
  free_ports 1
}

# Replicas started later must find their port free: ports the kernel hands to outgoing
# connections (ip_local_port_range) could be taken by any client meanwhile, so avoid them.
port_block() {
  "$ITEST_PY" - "$1" <<'EOF'
import random, socket, sys
n = int(sys.argv[1])
with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
    low = int(f.read().split()[0])
top = max(low - n, 11000)
for _ in range(500):
    base = random.randint(10000, top)
    socks = []
    try:
        for i in range(n):
            s = socket.socket(); s.bind(("127.0.0.1", base + i)); socks.append(s)
        print(base); break
    except OSError:
        pass
    finally:
        for s in socks: s.close()
EOF
}

itest_track() {
  ITEST_PIDS+=("$1")
}

itest_spawn() {
  local name=$1
  shift
  "$@" >"$ITEST_TMP/$name.log" 2>&1 &
  ITEST_LAST_PID=$!
  itest_track "$ITEST_LAST_PID"
}

pid_alive() {
  # A zombie is not alive; /proc/PID/stat's third field is the state.
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

wait_log_line() {
  local file=$1 regex=$2 timeout=${3:-30} pid=${4:-}
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    grep -Eq -- "$regex" "$file" 2>/dev/null && return 0
    if [ -n "$pid" ] && ! pid_alive "$pid"; then
      echo "wait_log_line: process $pid exited before '$regex' appeared in $file" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "wait_log_line: no line matching '$regex' in $file after ${timeout}s" >&2
  return 1
}

wait_http() {
  local url=$1 timeout=${2:-30} want=${3:-200} code
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$url" 2>/dev/null)
    [ "$code" = "$want" ] && return 0
    sleep 0.2
  done
  echo "wait_http: $url did not answer $want within ${timeout}s (last: ${code:-none})" >&2
  return 1
}

itest_stop_pid() {
  local pid=$1 grace=${2:-5} i
  pid_alive "$pid" || { wait "$pid" 2>/dev/null; return 0; }
  kill -TERM "$pid" 2>/dev/null
  for ((i = 0; i < grace * 10; i++)); do
    pid_alive "$pid" || break
    sleep 0.1
  done
  if pid_alive "$pid"; then
    echo "itest: pid $pid ignored SIGTERM for ${grace}s; killing" >&2
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null # reaps our own children; a no-op for others
  return 0
}

marked_pids() {
  # Processes whose environment carries this run's marker (descendants of what we started),
  # plus those of the PIDs given that are alive; sorted, no zombies. The commands of the
  # caller's own pipeline ($(marked_pids | tr ...)) carry the marker too, and are not counted:
  # a process is skipped when its parent is one of the subshells between the test's shell
  # and this scan.
  [ -n "${ITEST_MARK:-}" ] || return 0
  "$ITEST_PY" - "$ITEST_MARK" "$$" "$@" <<'EOF'
import os, sys
want = ("AISCALE_ITEST_MARK=" + sys.argv[1]).encode()
top = int(sys.argv[2])
extra = set(sys.argv[3:])
me = os.getpid()


def stat(pid):
    with open("/proc/%s/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])  # state, parent


scan_parents = set()
p = os.getppid()
while p > 1 and p != top:
    scan_parents.add(p)
    try:
        p = stat(p)[1]
    except (OSError, IndexError, ValueError):
        break
found = set()
for d in os.listdir("/proc"):
    if not d.isdigit() or int(d) == me or int(d) in scan_parents:
        continue
    try:
        state, parent = stat(d)
        if state in ("Z", "X") or (parent in scan_parents and d not in extra):
            continue
        if d in extra:
            found.add(int(d))
            continue
        with open("/proc/%s/environ" % d, "rb") as f:
            if want in f.read().split(b"\0"):
                found.add(int(d))
    except (OSError, IndexError):
        continue
for pid in sorted(found):
    print(pid)
EOF
}

itest_leftovers() {
  marked_pids "${ITEST_PIDS[@]}"
}

itest_cleanup() {
  local i pid
  if declare -F prom_stop >/dev/null; then prom_stop; fi
  for ((i = ${#ITEST_PIDS[@]} - 1; i >= 0; i--)); do
    itest_stop_pid "${ITEST_PIDS[i]}" 5
  done
  for pid in $(marked_pids); do itest_stop_pid "$pid" 3; done
  return 0
}

itest_assert_no_leftovers() {
  local left pid
  left=$(itest_leftovers)
  [ -z "$left" ] && return 0
  echo "FAIL: processes left behind:" >&2
  for pid in $left; do echo "  $pid $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" >&2; done
  return 1
}

itest_fail() {
  local f
  echo "FAIL: $*" >&2
  for f in "$ITEST_TMP"/*.log; do
    [ -f "$f" ] || continue
    echo "---- tail of $(basename "$f")" >&2
    tail -n 20 "$f" >&2
  done
  exit 1
}
