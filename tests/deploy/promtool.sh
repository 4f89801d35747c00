#!/usr/bin/env bash
# promtool on deploy/monitoring's alert rules: `check` validates aiscale-rules.yaml, `test`
# runs aiscale-rules.test.yaml (each alert fires on its condition and not otherwise).
# Usage: promtool.sh check|test SOURCE_DIR. Exit 77 (CTest: skipped) when promtool is absent.
set -euo pipefail
mode=$1
dir=$2/deploy/monitoring
if ! command -v promtool >/dev/null; then
  echo "SKIP: promtool not found (Debian package prometheus); rules not checked"
  exit 77
fi
cd "$dir"
case "$mode" in
  check) promtool check rules aiscale-rules.yaml ;;
  test) promtool test rules aiscale-rules.test.yaml ;;
  *) echo "usage: $0 check|test SOURCE_DIR" >&2; exit 2 ;;
esac
