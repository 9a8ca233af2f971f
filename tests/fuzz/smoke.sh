#!/usr/bin/env bash
# One fuzz target's smoke run (ctest label fuzz-smoke): every input of its seed corpus is run
# (the regression inputs of crashes found earlier among them), then the target fuzzes for a few
# seconds, on a scratch copy of the corpus: the repository's corpus is never written. Fails on
# any crash, sanitizer report, leak, timeout (10 s per input) or RSS over 2 GiB.
#   tests/fuzz/smoke.sh FUZZ_BINARY CORPUS_DIR
#   IBFABRIC_FUZZ_SMOKE_SECONDS=5   how long it fuzzes after the corpus
set -euo pipefail

bin="$1"
corpus="$2"
seconds="${IBFABRIC_FUZZ_SMOKE_SECONDS:-5}"

work="$(mktemp -d "${TMPDIR:-/tmp}/ibfabric-fuzz-smoke.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp -r "$corpus"/. "$work/corpus/"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$work"
if ! "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -print_funcs=0 \
    -artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1; then
  cat "$work/log"
  for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$f" ] && echo "smoke.sh: failing input ($(basename "$f")): $(od -An -tx1 "$f" | tr -d " \n" | head -c 2000)"
  done
  echo "smoke.sh: $(basename "$bin") failed" >&2
  exit 1
fi
grep -E '^(#[0-9]+ +DONE|Done|stat::)' "$work/log" || tail -n 5 "$work/log"
