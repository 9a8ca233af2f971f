#!/usr/bin/env bash
# The README's test command: installs dependencies, builds the sanitizer and the fuzz trees and
# runs every test with ctest.
#   ./scripts/test.sh                  all tests: the ASan/UBSan tree, then the fuzz smoke runs
#   ./scripts/test.sh -L unit          only one label (unit | integration | e2e | lint | fuzz-smoke)
#   IBFABRIC_TEST_TREES="asan release" ./scripts/test.sh   also (or only) the optimized tree
#   IBFABRIC_SKIP_FUZZ=1 ./scripts/test.sh                 skip the fuzz tree (clang, libFuzzer)
# Every test runs once, sanitized (AddressSanitizer + UndefinedBehaviorSanitizer, -O0): on 2
# cores a second full build and run of the optimized tree would double the time for no test of
# its own (the demo and bench/ build that tree; scripts/tsan.sh runs the threaded code's tests
# under ThreadSanitizer).
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
# Each phase's seconds, printed at the end (and on failure) to see where the time goes.
phases=""
phase() { phases+="$1 $(( $(date +%s) - mark )) s; "; mark=$(date +%s); }
trap 'echo "test.sh: ${phases:-no phase finished}"' EXIT
mark=$start
./scripts/deps.sh
phase deps

# Leftovers from an interrupted earlier run must not hold simulator names or ports.
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-test-sims}"

for tree in ${IBFABRIC_TEST_TREES:-asan}; do
  case "$tree" in
    release) ./scripts/build.sh release
             phase "release build"
             (cd build && ctest --output-on-failure -j2 --timeout 900 "$@")
             phase "release tests" ;;
    asan)    ./scripts/build.sh asan
             phase "asan build"
             # umad2sim is LD_PRELOADed into sanitized children: ASan cannot be first in the
             # list then.
             (export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1:abort_on_error=1:suppressions=$PWD/tests/asan.supp"
              export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
              export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
              cd build-asan && ctest --output-on-failure -j2 --timeout 900 "$@")
             phase "asan tests" ;;
    *) echo "test.sh: unknown tree '$tree' in IBFABRIC_TEST_TREES (asan | release)" >&2; exit 2 ;;
  esac
done

if [ "${IBFABRIC_SKIP_FUZZ:-0}" != 1 ]; then
  # The libFuzzer targets: each replays its seed corpus and fuzzes a few seconds (tests/fuzz).
  ./scripts/build.sh fuzz
  phase "fuzz build"
  (cd build-fuzz && ctest --output-on-failure -j2 --timeout 300 -L fuzz-smoke "$@")
  phase "fuzz smoke"
fi

echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
