#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages only), builds, and then either runs the demo
# or the whole test suite. Used by the README's two set-up commands and by .ci/run.
#   bash scripts/bootstrap.sh demo   # install, build, run `aiscale demo`
#   bash scripts/bootstrap.sh test   # install, build, run every test (CTest), then
#                                    # scripts/sanitize.sh asan (ASan+UBSan)
set -euo pipefail
mode=${1:-demo}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

pkgs=(build-essential cmake ninja-build pkg-config libyaml-cpp-dev nlohmann-json3-dev
      libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev zlib1g-dev libcli11-dev
      libcurl4-openssl-dev libcpp-httplib-dev libssl-dev ccache clang-format git
      python3 prometheus curl openssl slurm-wlm python3-torch libgoogle-perftools-dev)
# The test suite's ASan+UBSan stage builds with clang-14 and links libFuzzer (sanitize.sh).
# Its kubectl cross-checks run Debian's kubectl where no other kubectl is installed (checked
# with Debian's 1.20.2 and 1.32; they skip without one).
# The dashboard's browser test drives Debian's chromium (tests/integration/dashboard_browser.sh;
# playwright-core comes from the npm registry, pinned in tests/browser/package-lock.json; node
# and npm are the machine's own where it has them, else Debian's nodejs and npm).
# report.html is opened in headless Chromium by tests/integration/report_browser.sh.
if [ "$mode" = test ]; then
  pkgs+=(clang-14 libclang-rt-14-dev chromium)
  command -v kubectl >/dev/null || pkgs+=(kubernetes-client)
  command -v npm >/dev/null || pkgs+=(nodejs npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build=${AISCALE_BUILD_DIR:-build}
jobs=$(nproc)
# The layer libraries as unity units: a one-shot build compiles them in a third of the CPU
# time (505 vs 1,484 s at -O2 -g, docs/testing.md). The TSan build compiles every file alone.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DAISCALE_WERROR="${AISCALE_WERROR:-OFF}" -DAISCALE_UNITY_LIBS=ON >/dev/null
cmake --build "$build" -j "$jobs"
echo "bootstrap: built in ${SECONDS} s"

case "$mode" in
  demo)
    "$build/aiscale" demo --out "${AISCALE_DEMO_OUT:-aiscale-demo}"
    ;;
  test)
    # The suite under sanitizers too, in build dirs of their own (issue 11).
    # AISCALE_SANITIZE_TESTS names the modes: "asan tsan" (the default: every unit test and fuzz
    # corpus under ASan+UBSan, then the concurrency tests under TSan), "asan" or "tsan" alone,
    # or 0 to skip. Their builds start now, at the lowest CPU priority, beside the suite below:
    # its integration scripts mostly wait on real processes, and the builds take that idle
    # time (docs/testing.md). Their tests run once the suite has passed.
    sanitize=${AISCALE_SANITIZE_TESTS:-asan tsan}
    san_pid=""
    if [ "$sanitize" != 0 ]; then
      # shellcheck disable=SC2086 # the modes are words
      setsid nice -n 19 bash scripts/sanitize.sh $sanitize --jobs "$jobs" --build-only \
        >"$build/sanitize-build.log" 2>&1 &
      san_pid=$!
    fi
    # One job more than cores: the integration scripts mostly wait on real processes (CMake
    # starts them first), and the unit tests use the idle core time meanwhile.
    if ! (cd "$build" && ctest --output-on-failure -j "$((jobs + 1))" --timeout 600); then
      [ -z "$san_pid" ] || kill -- "-$san_pid" 2>/dev/null || true
      exit 1
    fi
    echo "bootstrap: tests passed at ${SECONDS} s"
    if [ -n "$san_pid" ]; then
      if ! wait "$san_pid"; then
        cat "$build/sanitize-build.log"
        echo "bootstrap: a sanitizer build failed" >&2
        exit 1
      fi
      grep '^sanitize:' "$build/sanitize-build.log" || true
      echo "bootstrap: sanitizer builds done at ${SECONDS} s"
      # shellcheck disable=SC2086
      bash scripts/sanitize.sh $sanitize --jobs "$jobs" --no-build
    fi
    ;;
  *)
    echo "usage: bootstrap.sh demo|test" >&2
    exit 2
    ;;
esac
