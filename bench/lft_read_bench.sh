#!/usr/bin/env bash
# LFT read benchmark: every switch's forwarding table read over the MAD engine (SwitchInfo, then
# 64-LID blocks, LID-routed) on ibsim fabrics routed by OpenSM ftree, plus validation of every CA
# pair on the tables read; via `ibfabric routes --validate --format json` under `sim run`.
#
#   bench/lft_read_bench.sh [--repeats 3] [--windows 64] [--fabrics "two-level-2048 superpod-40"]
#
# Prints one Markdown table row per (fabric, window, run); fabrics are taken down on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
repeats=3
windows=64
fabrics="two-level-2048 superpod-40"
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --windows) windows="$2"; shift 2 ;;
    --fabrics) fabrics="$2"; shift 2 ;;
    *) echo "usage: $0 [--repeats N] [--windows LIST] [--fabrics LIST]" >&2; exit 2 ;;
  esac
done
cli="$root/build/ibfabric"
[ -x "$cli" ] || { echo "missing $cli: ./scripts/build.sh release" >&2; exit 2; }
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/sims-lftbench}"
work=$(mktemp -d /tmp/lftbench.XXXXXX)
names=()
cleanup() {
  for n in "${names[@]}"; do "$cli" sim down --name "$n" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "| fabric | switches | CAs | window | run | LFT read s | MADs | MADs/s | validate s | CA pairs |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for f in $fabrics; do
  case "$f" in
    two-level-2048) gen=(--preset two-level --leaves 64 --spines 32 --hosts-per-leaf 32) ;;
    superpod-40) gen=(--preset superpod --sus 40) ;;
    superpod-8) gen=(--preset superpod --sus 8) ;;
    *) echo "unknown fabric $f" >&2; exit 2 ;;
  esac
  net="$work/$f.net"
  "$cli" topo gen "${gen[@]}" >"$net"
  name="lftbench-$f"
  names+=("$name")
  "$cli" sim up "$net" --name "$name" --timeout 600 >>"$work/log.txt" 2>&1
  for w in ${windows//,/ }; do
    for r in $(seq 1 "$repeats"); do
      "$cli" sim run --name "$name" --timeout 600 -- "$cli" routes --validate --format json \
        --mad-window "$w" --limit 0 >"$work/out.json" 2>>"$work/log.txt"
      python3 - "$f" "$w" "$r" "$work/out.json" <<'PY'
import json, sys
f, w, r, path = sys.argv[1:5]
j = json.load(open(path))
v = j["validation"]
s = j["read_seconds"]
print(f"| {f} | {j['switches']} | {int((1 + (1 + 4 * v['pairs_checked']) ** 0.5) / 2)} | {w} | {r} | "
      f"{s:.3f} | {j['mads']} | {j['mads'] / s:,.0f} | {v['seconds']:.3f} | {v['pairs_checked']:,} |")
PY
    done
  done
  "$cli" sim down --name "$name" >>"$work/log.txt" 2>&1 || true
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); log: $work/log.txt"
