#!/usr/bin/env bash
# Discovery benchmark: wall time and SMPs of `ibfabric discover` vs the real `ibnetdiscover`
# (its default, and with -o 32 outstanding SMPs) on the same simulated fabrics, same run.
#
#   bench/discovery_bench.sh [--runs N] [--fabrics "two-level-2048 superpod-8"]
#
# Prints a Markdown block ready for docs/BENCHMARKS.md. Every command runs attached to the
# fabric through `ibfabric sim run`, so each side pays the same process start-up.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=5
fabrics="two-level-2048 superpod-8"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --fabrics) fabrics="$2"; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--fabrics LIST]" >&2; exit 2 ;;
  esac
done

[ -x build/ibfabric ] || ./scripts/build.sh release >/dev/null
cli="$root/build/ibfabric"
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-bench}"
work=$(mktemp -d /tmp/ibfabric-bench-XXXXXX)
name="bench-disc-$$"
trap '"$cli" sim down --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

gen() {
  case "$1" in
    two-level-2048) "$cli" topo gen --preset two-level --leaves 64 --spines 32 --hosts-per-leaf 32 ;;
    superpod-8) "$cli" topo gen --preset superpod --sus 8 ;;
    superpod-40) "$cli" topo gen --preset superpod --sus 40 ;;
    *) echo "unknown fabric $1" >&2; exit 2 ;;
  esac
}

now() { date +%s.%N; }
# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

echo "### Discovery — $(date -u +%Y-%m-%d\ %H:%M) UTC, $(nproc) cores, $runs runs each"
echo
echo "Command: \`bench/discovery_bench.sh --runs $runs --fabrics \"$fabrics\"\`"
echo
echo "| fabric | nodes | tool | median s | min s | max s | ratio to ibnetdiscover | SMPs |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for f in $fabrics; do
  net="$work/$f.net"
  gen "$f" > "$net"
  up_start=$(now)
  "$cli" sim up "$net" --name "$name" --timeout 300 >/dev/null
  up_s=$(echo "$(now) - $up_start" | bc)
  nodes=$(grep -cE '^(Switch|Ca|Hca)' "$net")
  declare -A times=()
  smps=""
  for i in $(seq 1 "$runs"); do
    for tool in ibnetdiscover ibnetdiscover-o32 ibfabric; do
      case "$tool" in
        ibnetdiscover) cmd=(ibnetdiscover) ;;
        ibnetdiscover-o32) cmd=(ibnetdiscover -o 32) ;;
        ibfabric) cmd=("$cli" discover --format summary) ;;
      esac
      t0=$(now)
      "$cli" sim run --name "$name" -- "${cmd[@]}" > "$work/out.txt" 2>&1
      t1=$(now)
      times[$tool]+="$(echo "$t1 - $t0" | bc) "
      if [ "$tool" = ibfabric ]; then
        smps=$(grep -oiE '[0-9]+ (SMPs|MADs)' "$work/out.txt" | head -1 | grep -oE '[0-9]+' || true)
      fi
    done
  done
  base=$(echo "${times[ibnetdiscover]}" | tr ' ' '\n' | grep . | median)
  for tool in ibnetdiscover ibnetdiscover-o32 ibfabric; do
    vals=$(echo "${times[$tool]}" | tr ' ' '\n' | grep .)
    med=$(echo "$vals" | median)
    mn=$(echo "$vals" | sort -g | head -1)
    mx=$(echo "$vals" | sort -g | tail -1)
    ratio=$(echo "scale=2; $med / $base" | bc)
    s="-"; [ "$tool" = ibfabric ] && s="${smps:-?}"
    printf '| %s | %s | %s | %.3f | %.3f | %.3f | %sx | %s |\n' "$f" "$nodes" "$tool" "$med" "$mn" "$mx" "$ratio" "$s"
  done
  echo "| $f | $nodes | (sim up: ibsim + OpenSM ftree) | $(printf %.1f "$up_s") | | | | |"
  unset times
  "$cli" sim down --name "$name" >/dev/null
done
echo
echo "Wall time per command includes process start-up and \`sim run\`'s attach, equally for all."
