#!/usr/bin/env bash
# Fuzzing benchmark: each libFuzzer target of tests/fuzz (the fuzz tree, scripts/build.sh fuzz)
# for minutes, on a scratch copy of its seed corpus (tests/fuzz/corpus/<target>: never written).
#
#   bench/fuzz_bench.sh [--seconds 300] [--targets "netfile pool_journal ..."] [--jobs 1]
#                       [--keep DIR]
#
# Per target: executions, executions per second, coverage (libFuzzer's `cov`: edges reached,
# `ft`: features), the corpus it ended with (inputs and bytes) against the seeds, peak RSS, and
# the crashes found (crash/leak/timeout/oom inputs; kept in --keep DIR, else in the scratch
# directory, which is then kept and printed). A target that crashes stops there (libFuzzer
# stops at the first finding) and its row says so. Builds nothing: run scripts/build.sh fuzz
# first. Prints one Markdown block.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=300 targets="" jobs=1 keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "fuzz_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$targets" ] || targets="$(ls tests/fuzz/corpus)"

work="$(mktemp -d "${TMPDIR:-/tmp}/ibfabric-fuzz-bench.XXXXXX")"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }
found=0
rows=()
for t in $targets; do
  bin="$root/build-fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz_bench.sh: $bin missing (scripts/build.sh fuzz)" >&2; exit 1; }
  dir="$work/$t"
  mkdir -p "$dir/corpus"
  cp -r "tests/fuzz/corpus/$t"/. "$dir/corpus/"
  seeds=$(ls "$dir/corpus" | wc -l)
  rc=0
  parallel=()
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  (cd "$dir" && "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -print_funcs=0 "${parallel[@]}" -artifact_prefix="$dir/" \
      "$dir/corpus" >"$dir/log" 2>&1) || rc=$?
  # With -jobs > 1 libFuzzer writes fuzz-<n>.log per job; their stats are summed.
  logs=("$dir/log")
  [ "$jobs" -gt 1 ] && logs=("$dir"/fuzz-*.log)
  execs=0 rss=0
  for l in "${logs[@]}"; do
    e=$(stat number_of_executed_units "$l"); execs=$(( execs + ${e:-0} ))
    r=$(stat peak_rss_mb "$l"); [ "${r:-0}" -gt "$rss" ] && rss=${r:-0}
  done
  last=$(grep -hE '^#[0-9]+' "${logs[@]}" | tail -n 1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  # libFuzzer's own rate (a run that stopped at a finding ran less than --seconds).
  rate=$(sed -n 's/.* exec\/s: \([0-9]*\).*/\1/p' <<<"$last")
  crashes=$(ls "$dir" | grep -cE '^(crash|leak|timeout|oom)-' || true)
  found=$(( found + crashes ))
  inputs=$(ls "$dir/corpus" | wc -l)
  bytes=$(du -sb "$dir/corpus" | cut -f1)
  note=""
  [ "$rc" -ne 0 ] && note=" (stopped: exit $rc)"
  rows+=("| $t | $execs | ${rate:-?} | ${cov:-?} | ${ft:-?} | $seeds -> $inputs ($bytes B) | $rss | $crashes$note |")
done

echo "fuzz_bench.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), ${seconds} s per target, -jobs=$jobs, $(nproc) cores"
echo
echo "| target | executions | exec/s | cov (edges) | ft (features) | corpus: seeds -> inputs | peak RSS MB | crashes |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp -r "$work"/. "$keep"/
  rm -rf "$work"
  echo; echo "logs, corpora and findings kept in $keep"
elif [ "$found" -gt 0 ]; then
  echo; echo "findings kept in $work"
else
  rm -rf "$work"
fi
