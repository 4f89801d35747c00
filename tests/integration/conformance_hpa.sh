#!/bin/bash
# Runs `aiscale conformance hpa` on every shared hpa_*.json vector file and on the project's
# own tests/conformance/hpa_*.json; fails if any case fails, the command errors, or the
# closing "N passed, N failed" line is missing.
# Usage: conformance_hpa.sh <aiscale binary> <source dir>
set -u
bin="$1"
src="$2"
shared="${AISCALE_SHARED_DIR:-$src/../shared}"
files=("$shared"/conformance/hpa_*.json "$src"/tests/conformance/hpa_*.json)
status=0
ran=0
for f in "${files[@]}"; do
  if [ ! -f "$f" ]; then
    echo "missing vector file (glob matched nothing): $f"
    status=1
    continue
  fi
  out=$("$bin" conformance hpa "$f")
  rc=$?
  last=$(printf '%s\n' "$out" | tail -n 1)
  if ! [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    echo "FAIL $f: no closing 'N passed, N failed' line (exit $rc)"
    printf '%s\n' "$out" | tail -n 5
    status=1
    continue
  fi
  passed="${BASH_REMATCH[1]}"
  failed="${BASH_REMATCH[2]}"
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
    echo "FAIL $f: $last (exit $rc)"
    printf '%s\n' "$out" | grep '^FAIL' || true
    status=1
  else
    echo "ok   $f: $last"
  fi
  ran=$((ran + 1))
done
[ "$ran" -ge 2 ] || { echo "expected at least the shared and the project vector files"; status=1; }
exit $status
