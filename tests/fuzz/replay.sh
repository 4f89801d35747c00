#!/usr/bin/env bash
# Quick replay: runs every libFuzzer harness once over its seed corpus (tests/fuzz/corpus/<name>/,
# which includes every crash input found and fixed), so a parser change that brings back a
# crash fails fast. Needs the fuzz build (scripts/fuzz.sh, or cmake -DAISCALE_FUZZ=ON with
# clang++-14); exits 77 (skip) when it is absent, 1 when any input crashes.
#
#   tests/fuzz/replay.sh [BUILD_DIR=build-fuzz] [SOURCE_DIR=repo root]
set -uo pipefail

src="${2:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${1:-$src/build-fuzz}"
failed=0
ran=0
for f in "$src"/tests/fuzz/*_fuzz.cc; do
  name="$(basename "$f" .cc)"
  bin="$build/$name"
  corpus="$src/tests/fuzz/corpus/${name%_fuzz}"
  if [[ ! -x "$bin" ]]; then
    echo "replay: $bin not built; skipping" >&2
    continue
  fi
  [[ -d "$corpus" ]] || continue
  ran=$((ran + 1))
  if "$bin" -runs=0 -timeout=10 "$corpus" >"$build/$name.replay.log" 2>&1; then
    echo "replay: $name ok ($(find "$corpus" -type f | wc -l) inputs)"
  else
    echo "replay: $name FAILED (see $build/$name.replay.log)" >&2
    failed=1
  fi
done
((ran == 0)) && exit 77
exit "$failed"
