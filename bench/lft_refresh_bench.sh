#!/usr/bin/env bash
# Forwarding-table refresh benchmark: full LFT reads vs incremental refreshes on a healthy fabric
# and with one switch cut off (every cable of the first leaf unlinked; the SM is told not to
# reroute, so the other tables stay valid), via build/lft_refresh_bench under `sim run`.
#
#   bench/lft_refresh_bench.sh [--repeats 5] [--fabric two-level-2048|two-level-small|superpod-40]
#                              [--attach NAME]
#
# --attach NAME uses a fabric already up under that name (IBFABRIC_SIM_DIR; started with
# --sm-option sweep_on_trap=FALSE --sm-sweep-interval 0) instead of bringing one up: the
# 10,240-HCA superpod takes minutes to start. The first leaf is still unlinked; bring the
# fabric down afterwards.
#
# Prints one Markdown table row per phase (median, min and max over the runs; MADs of the last
# run). The fabric is taken down on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
repeats=5
fabric=two-level-2048
attach=""
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --fabric) fabric="$2"; shift 2 ;;
    --attach) attach="$2"; shift 2 ;;
    *) echo "usage: $0 [--repeats N] [--fabric NAME]" >&2; exit 2 ;;
  esac
done
cli="$root/build/ibfabric"
bench="$root/build/lft_refresh_bench"
for f in "$cli" "$bench"; do
  [ -x "$f" ] || { echo "missing $f: ./scripts/build.sh release" >&2; exit 2; }
done
case "$fabric" in
  two-level-2048) gen=(--preset two-level --leaves 64 --spines 32 --hosts-per-leaf 32) ;;
  two-level-small) gen=(--preset two-level --leaves 8 --spines 4 --hosts-per-leaf 4) ;;
  superpod-40) gen=(--preset superpod --sus 40) ;;
  *) echo "unknown fabric $fabric" >&2; exit 2 ;;
esac
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/sims-lftrefresh}"
work=$(mktemp -d /tmp/lftrefresh.XXXXXX)
name="${attach:-lftrefresh-$fabric}"
firstLeaf=leaf-01
[ "$fabric" = superpod-40 ] && firstLeaf=leaf-su1-r1
benchpid=""
cleanup() {
  [ -n "$benchpid" ] && kill "$benchpid" 2>/dev/null || true
  [ -n "$attach" ] || "$cli" sim down --name "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$attach" ]; then
  "$cli" topo gen "${gen[@]}" >"$work/fabric.net"
  "$cli" sim up "$work/fabric.net" --name "$name" --timeout 600 \
    --sm-option sweep_on_trap=FALSE --sm-option sweep_interval=0 >>"$work/log.txt" 2>&1
fi
"$cli" sim run --name "$name" --timeout 900 -- "$bench" --repeats "$repeats" \
  --go-file "$work/go" >"$work/out.txt" 2>>"$work/log.txt" &
benchpid=$!
for _ in $(seq 1 3000); do
  grep -q '^READY' "$work/out.txt" && break
  grep -q '^error' "$work/out.txt" && { cat "$work/out.txt" >&2; exit 1; }
  kill -0 "$benchpid" 2>/dev/null || { cat "$work/out.txt" "$work/log.txt" >&2; exit 1; }
  sleep 0.1
done
grep -q '^READY' "$work/out.txt" || { echo "bench never got ready" >&2; exit 1; }
"$cli" sim cmd --name "$name" "Unlink \"$firstLeaf\"" >>"$work/log.txt" 2>&1
touch "$work/go"
wait "$benchpid"
benchpid=""
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
grep '^switches=' "$work/out.txt"
python3 - "$work/out.txt" <<'PY'
import statistics, sys
rows = {}
order = []
for line in open(sys.argv[1]):
    if not line.startswith("phase="):
        continue
    kv = dict(p.split("=", 1) for p in line.split())
    if kv["phase"] not in rows:
        order.append(kv["phase"])
    rows.setdefault(kv["phase"], []).append(kv)
print("| phase | runs | median s | min s | max s | MADs | switches re-read | by DR | ok/stale/missing |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for p in order:
    rs = rows[p]
    s = [float(r["seconds"]) for r in rs]
    last = rs[-1]
    print(f"| {p} | {len(rs)} | {statistics.median(s):.4f} | {min(s):.4f} | {max(s):.4f} | "
          f"{last['mads']} | {last['switches_read']} | {last['by_dr']} | "
          f"{last['ok']}/{last['stale']}/{last['missing']} |")
PY
