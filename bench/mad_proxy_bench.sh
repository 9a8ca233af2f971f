#!/usr/bin/env bash
# MAD proxy cost: full counter sweeps of a 2,048-HCA fabric with the umad port in the sweeping
# process (`--transport inprocess`) vs in a MAD proxy child (`--transport subprocess`, the
# daemon's default: every MAD crosses a socketpair both ways), interleaved so both sample the
# same (shared, noisy) machine. Uses bench/sweep_bench (one child process per run).
#
#   bench/mad_proxy_bench.sh [--repeats 3] [--rounds 5] [--windows 64] [--fabric two-level-2048]
#
# Prints one Markdown table (median/min/max ports/s and s per sweep per transport and window)
# and the load average; raw output goes to $work/log.txt (path printed). The fabric is taken
# down on exit, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
repeats=3
rounds=5
windows=64
fabric=two-level-2048
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --windows) windows="$2"; shift 2 ;;
    --fabric) fabric="$2"; shift 2 ;;
    *) echo "usage: $0 [--repeats N] [--rounds N] [--windows LIST] [--fabric two-level-2048|small]" >&2; exit 2 ;;
  esac
done
cli="$root/build/ibfabric"
sweep="$root/build/sweep_bench"
for b in "$cli" "$sweep"; do
  [ -x "$b" ] || { echo "missing $b: cmake --build build -j2 --target ibfabric sweep_bench" >&2; exit 2; }
done
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/sims-madproxy}"
work=$(mktemp -d /tmp/madproxy-XXXXXX)
log="$work/log.txt"
name="madproxy-$$"
trap '"$cli" sim down --name "$name" >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT TERM

case "$fabric" in
  two-level-2048) gen=(topo gen --preset two-level --leaves 64 --spines 32 --hosts-per-leaf 32) ;;
  small) gen=(topo gen --preset two-level --leaves 4 --spines 2 --hosts-per-leaf 4) ;;
  *) echo "unknown fabric $fabric" >&2; exit 2 ;;
esac
"$cli" "${gen[@]}" > "$work/fabric.net"
"$cli" sim up "$work/fabric.net" --name "$name" --timeout 300 >>"$log" 2>&1
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for rep in $(seq 1 "$repeats"); do
  for t in inprocess subprocess; do
    echo "== repeat $rep transport $t" >>"$log"
    "$cli" sim run --name "$name" --timeout 900 -- "$sweep" --windows "$windows" \
      --rounds "$rounds" --transport "$t" >"$work/run-$t-$rep.txt" 2>>"$log" || true
    sed "s/^/[$t $rep] /" "$work/run-$t-$rep.txt" >>"$log"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# stats TRANSPORT WINDOW FIELD: "median min max count" over every timed round
stats() {
  cat "$work"/run-"$1"-*.txt | grep -E '^ *round ' | tr ' ' '\n' |
    awk -F= -v w="$2" -v f="$3" '
      /^window=/ { win = $2 } $1 == f { if (win == w) print $2 }' | sort -g |
    awk '{a[NR]=$1} END { if (NR == 0) { print "0 0 0 0"; exit }
      m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; print m, a[1], a[NR], NR }'
}
echo "Command: \`bench/mad_proxy_bench.sh --repeats $repeats --rounds $rounds --windows $windows --fabric $fabric\`"
echo "(raw log: $log); load average before $load_before, after $load_after; $(nproc) cores."
echo
echo "| transport | window | ports/s median (min–max) | s per sweep median (min–max) | rounds | failed requests |"
echo "| --- | ---: | --- | --- | ---: | ---: |"
for w in ${windows//,/ }; do
  for t in inprocess subprocess; do
    read -r pm pmin pmax n < <(stats "$t" "$w" ports_per_s)
    read -r sm smin smax _ < <(stats "$t" "$w" seconds)
    failed=$(cat "$work"/run-"$t"-*.txt | grep -E "^ *done window=$w " | tr ' ' '\n' |
      awk -F= '$1=="failed" {s+=$2} END {print s+0}')
    echo "| $t | $w | $pm ($pmin–$pmax) | $sm ($smin–$smax) | $n | $failed |"
  done
done
