#!/usr/bin/env bash
# Configures and builds one ibfabric build tree.
#   scripts/build.sh            -> build/        (RelWithDebInfo)
#   scripts/build.sh asan       -> build-asan/   (ASan + UBSan, Debug)
set -euo pipefail
cd "$(dirname "$0")/.."

kind="${1:-release}"
jobs="${IBFABRIC_BUILD_JOBS:-$(nproc)}"
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DIBFABRIC_SANITIZE=ON -DIBFABRIC_BENCH=OFF) ;;
  *) echo "build.sh: unknown build kind '$kind' (release|asan)" >&2; exit 2 ;;
esac

cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
