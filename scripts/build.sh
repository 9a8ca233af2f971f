#!/usr/bin/env bash
# Configures and builds one ibfabric build tree.
#   scripts/build.sh            -> build/        (RelWithDebInfo)
#   scripts/build.sh asan       -> build-asan/   (ASan + UBSan, Debug)
#   scripts/build.sh tsan [T..] -> build-tsan/   (ThreadSanitizer, RelWithDebInfo; targets T, or all)
#   scripts/build.sh fuzz [T..] -> build-fuzz/   (clang: libFuzzer targets with ASan + UBSan, -O1)
set -euo pipefail
cd "$(dirname "$0")/.."

kind="${1:-release}"
jobs="${IBFABRIC_BUILD_JOBS:-$(nproc)}"
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DIBFABRIC_SANITIZE=ON -DIBFABRIC_BENCH=OFF) ;;
  tsan) dir=build-tsan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBFABRIC_TSAN=ON -DIBFABRIC_BENCH=OFF) ;;
  # clang, asserts on, line tables for the sanitizers' stacks; never through a compiler launcher
  # (ccache) whatever the environment says.
  fuzz) dir=build-fuzz
        flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBFABRIC_FUZZ=ON -DIBFABRIC_BENCH=OFF
               -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
               "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
               "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
               -DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER=) ;;
  *) echo "build.sh: unknown build kind '$kind' (release|asan|tsan|fuzz)" >&2; exit 2 ;;
esac
shift $(( $# > 0 ? 1 : 0 ))
targets=()
for t in "$@"; do targets+=(--target "$t"); done

cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$jobs" "${targets[@]}"
