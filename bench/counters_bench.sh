#!/usr/bin/env bash
# One-shot counters benchmark: `ibfabric counters --format json` vs `ibqueryerrors --data` on the
# same simulated fabric, same run, the two tools alternating (the first one of each round
# alternates too), each as its own process attached through `ibfabric sim run`.
#
#   bench/counters_bench.sh [--runs 7] [--fabric two-level-2048|superpod-8|superpod-40]
#                           [--rt yes|no] [--extra "ARGS for ibfabric counters"]
#                           [--before OTHER-IBFABRIC-BINARY]
#
# --before: also measures another build's `ibfabric counters --format json` (e.g. main's, for
# the figures before a change) in the same rounds, as a third tool.
# Per run: wall time (date around the tool, inside the attached process, so `sim run`'s own
# attach is not counted for either) and peak RSS (/usr/bin/time -f %M). Every ibfabric document
# is checked: it parses and every port it polled answered, as many ports as ibqueryerrors says it
# checked. --rt yes (the default as root, when chrt exists): ibsim and both tools under
# SCHED_FIFO 50, so other jobs on the machine cannot take the cores from them.
#
# Prints a Markdown block ready for docs/BENCHMARKS.md; raw output goes to $work (printed). The
# fabric is taken down on exit, also on failure. State under IBFABRIC_SIM_DIR (default
# /tmp/sims-countersbench); ibsim takes at most 10 clients, and this uses one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=7
fabric=two-level-2048
extra=""
before=""
rt=no
[ "$(id -u)" = 0 ] && command -v chrt >/dev/null && rt=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --fabric) fabric="$2"; shift 2 ;;
    --rt) rt="$2"; shift 2 ;;
    --extra) extra="$2"; shift 2 ;;
    --before) before="$2"; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--fabric NAME] [--rt yes|no] [--extra ARGS] [--before BIN]" >&2; exit 2 ;;
  esac
done

cli="$root/build/ibfabric"
[ -x "$cli" ] || { echo "missing $cli: cmake --build build -j2 --target ibfabric" >&2; exit 2; }
command -v ibqueryerrors >/dev/null || { echo "ibqueryerrors not found (infiniband-diags)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found (GNU time)" >&2; exit 2; }
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/sims-countersbench}"
work=$(mktemp -d /tmp/countersbench-XXXXXX)
name="ctrbench-$$"
cleanup() { "$cli" sim down --name "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM

case "$fabric" in
  two-level-2048) gen=(topo gen --preset two-level --leaves 64 --spines 32 --hosts-per-leaf 32) ;;
  superpod-8) gen=(topo gen --preset superpod --sus 8) ;;
  superpod-40) gen=(topo gen --preset superpod --sus 40) ;;
  *) echo "unknown fabric $fabric" >&2; exit 2 ;;
esac
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
minimum() { sort -g | head -1; }
maximum() { sort -g | tail -1; }

"$cli" "${gen[@]}" > "$work/fabric.net"
up_start=$(date +%s.%N)
"$cli" sim up "$work/fabric.net" --name "$name" --timeout 300 > "$work/sim-up.txt"
up_s=$(echo "$(date +%s.%N) - $up_start" | bc)
prio=()
if [ "$rt" = yes ]; then
  prio=(chrt -f 50)
  ibsim_pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ibsim"]["pid"])' "$IBFABRIC_SIM_DIR/$name/state.json")
  chrt -f -p 50 "$ibsim_pid" >/dev/null
fi
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# measure TOOL RUN CMD...: one timed run; writes $work/TOOL.RUN.{out,err,rss,wall}.
measure() {
  local base="$work/$1.$2"
  shift 2
  # shellcheck disable=SC2016  # expanded by the inner bash
  "$cli" sim run --name "$name" --timeout 300 -- bash -c '
    base=$1; shift
    s=$(date +%s.%N)
    /usr/bin/time -f %M -o "$base.rss" "$@" > "$base.out" 2> "$base.err" || echo "exit $?" >> "$base.err"
    e=$(date +%s.%N)
    echo "$e - $s" | bc > "$base.wall"' measure "$base" "${prio[@]}" "$@"
}

# shellcheck disable=SC2206
ibf_cmd=("$cli" counters --format json $extra)
iqe_cmd=(ibqueryerrors --data)
before_cmd=("$before" counters --format json)
measure ibfabric warmup "${ibf_cmd[@]}"  # page cache, ibsim's first-contact costs
measure ibqueryerrors warmup "${iqe_cmd[@]}"
[ -n "$before" ] && measure before warmup "${before_cmd[@]}"
for i in $(seq 1 "$runs"); do
  if [ $((i % 2)) = 1 ]; then
    measure ibqueryerrors "$i" "${iqe_cmd[@]}"
    measure ibfabric "$i" "${ibf_cmd[@]}"
  else
    measure ibfabric "$i" "${ibf_cmd[@]}"
    measure ibqueryerrors "$i" "${iqe_cmd[@]}"
  fi
  if [ -n "$before" ]; then measure before "$i" "${before_cmd[@]}"; fi
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Correctness: every ibfabric document parses, every polled port answered, as many ports as
# ibqueryerrors checked.
iqe_ports=$(grep -oE '[0-9]+ ports checked' "$work/ibqueryerrors.1.out" | grep -oE '^[0-9]+')
for i in $(seq 1 "$runs"); do
  python3 - "$work/ibfabric.$i.out" "$iqe_ports" <<'PY' || { echo "run $i: bad ibfabric output (see $work)" >&2; exit 1; }
import json, sys
doc = json.load(open(sys.argv[1]))
sweep = doc["sweeps"][0]
assert sweep["ports_polled"] == sweep["ports_ok"] == len(sweep["ports"]) == int(sys.argv[2]), (
    sweep["ports_polled"], sweep["ports_ok"], len(sweep["ports"]), sys.argv[2])
for p in sweep["ports"]:
    assert p["status"] == "ok" and "symbol_errors" in p["counters"] and "xmit_data" in p["counters"], p
PY
done

row() {
  local tool=$1 walls rss
  walls=$(cat "$work/$tool".[0-9]*.wall)
  rss=$(cat "$work/$tool".[0-9]*.rss | awk '{print $1 / 1024}')
  printf '| %s | %s | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f |' "$2" "$runs" \
    "$(echo "$walls" | median)" "$(echo "$walls" | minimum)" "$(echo "$walls" | maximum)" \
    "$(echo "$rss" | median)" "$(echo "$rss" | minimum)" "$(echo "$rss" | maximum)"
}
ibf_wall=$(cat "$work"/ibfabric.[0-9]*.wall | median)
iqe_wall=$(cat "$work"/ibqueryerrors.[0-9]*.wall | median)
ibf_rss=$(cat "$work"/ibfabric.[0-9]*.rss | median)
iqe_rss=$(cat "$work"/ibqueryerrors.[0-9]*.rss | median)
ratio() { echo "scale=2; $1 / $2" | bc | sed 's/^\./0./'; }

echo "### Counters one-shot vs ibqueryerrors --data — $(date -u +%Y-%m-%d\ %H:%M) UTC, $(nproc) cores, $runs runs each"
echo
echo "Command: \`bench/counters_bench.sh --runs $runs --fabric $fabric$([ -n "$extra" ] && echo " --extra \"$extra\"")\`. Fabric: $(head -1 "$work/sim-up.txt" | sed 's/^fabric "[^"]*" is up in [0-9.]* s: //')."
echo
echo "| tool | runs | wall median s | min s | max s | peak RSS median MB | min MB | max MB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
row ibfabric "\`ibfabric counters --format json${extra:+ $extra}\`"; echo
row ibqueryerrors "\`ibqueryerrors --data\` ($iqe_ports ports checked)"; echo
echo "| ratio ibfabric / ibqueryerrors (medians) | | $(ratio "$ibf_wall" "$iqe_wall")x | | | $(ratio "$ibf_rss" "$iqe_rss")x | | |"
if [ -n "$before" ]; then
  b_wall=$(cat "$work"/before.[0-9]*.wall | median)
  b_rss=$(cat "$work"/before.[0-9]*.rss | median)
  row before "before: \`$before counters --format json\`"; echo
  echo "| ratio before / ibqueryerrors (medians) | | $(ratio "$b_wall" "$iqe_wall")x | | | $(ratio "$b_rss" "$iqe_rss")x | | |"
fi
echo
echo "sim up $(printf %.1f "$up_s") s; load average before $load_before, after $load_after; scheduling: $([ "$rt" = yes ] && echo "ibsim and every tool under SCHED_FIFO 50 (chrt)" || echo "default"). Every ibfabric document parsed with all $iqe_ports ports ok; output of both tools to files. Raw data: $work"
