#!/usr/bin/env bash
# Runs `aiscale conformance kpa` on every shared kpa_*.json and on the project's own
# tests/conformance/kpa_*.json. Fails on any failed case, a non-zero exit, or a missing
# closing `N passed, N failed` line.
# Usage: conformance_kpa.sh <aiscale binary> <source dir>
set -u
bin="$1"
src="$2"
shared="${AISCALE_SHARED_DIR:-$src/../shared}"
shopt -s nullglob
files=("$shared"/conformance/kpa_*.json "$src"/tests/conformance/kpa_*.json)
if [ "${#files[@]}" -eq 0 ]; then
  echo "no kpa_*.json vector files found under $shared/conformance or $src/tests/conformance" >&2
  exit 1
fi
shared_files=("$shared"/conformance/kpa_*.json)
if [ "${#shared_files[@]}" -eq 0 ]; then
  echo "no shared kpa_*.json under $shared/conformance" >&2
  exit 1
fi
status=0
for f in "${files[@]}"; do
  out="$("$bin" conformance kpa "$f" 2>&1)"
  rc=$?
  echo "== $f"
  echo "$out"
  last="$(printf '%s\n' "$out" | tail -n 1)"
  if ! [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    echo "FAILED: $f: no closing 'N passed, N failed' line (exit $rc)" >&2
    status=1
    continue
  fi
  passed="${BASH_REMATCH[1]}"
  failed="${BASH_REMATCH[2]}"
  if [ "$failed" -ne 0 ] || [ "$rc" -ne 0 ] || [ "$passed" -eq 0 ]; then
    echo "FAILED: $f: $passed passed, $failed failed, exit $rc" >&2
    status=1
  fi
  if printf '%s\n' "$out" | grep -q '^FAIL '; then
    echo "FAILED: $f has failing cases" >&2
    status=1
  fi
done
exit $status
