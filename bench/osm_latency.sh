#!/usr/bin/env bash
# Fault-detection latency: Unlink of a leaf-spine cable -> link_down in ibfabricd's
# /api/v1/events, with the OpenSM event plugin (trap -> re-probe) and without it (the next
# periodic crawl). Same fabric, same run; the event's own timestamp minus the Unlink time.
#
#   bench/osm_latency.sh [--runs N] [--crawl-interval S] [--leaves L --spines S --hosts H]
#
# Prints a Markdown block ready for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=5
crawl=10
leaves=4
spines=2
hosts=4
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --crawl-interval) crawl="$2"; shift 2 ;;
    --leaves) leaves="$2"; shift 2 ;;
    --spines) spines="$2"; shift 2 ;;
    --hosts) hosts="$2"; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--crawl-interval S] [--leaves L --spines S --hosts H]" >&2
       exit 2 ;;
  esac
done

[ -x build/ibfabric ] && [ -f build/libibfabric_osm.so ] || ./scripts/build.sh release >/dev/null
cli="$root/build/ibfabric"
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-bench}"
work=$(mktemp -d /tmp/ibfabric-osm-XXXXXX)
name="bench-osm-$$"
sock="$work/osm.sock"
daemon_pid=""
stop_daemon() {
  if [ -n "$daemon_pid" ]; then
    kill -TERM "$daemon_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
    daemon_pid=""
  fi
}
trap 'stop_daemon; "$cli" sim down --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# A two-level fat tree in ibsim's format (leaf ports 1..H hosts, then the spines).
{
  for l in $(seq "$leaves"); do
    echo "Switch $((hosts + spines)) \"leaf$l\""
    for h in $(seq "$hosts"); do echo "[$h] \"host$l-$h\"[1]"; done
    for s in $(seq "$spines"); do echo "[$((hosts + s))] \"spine$s\"[$l]"; done
    echo
  done
  for s in $(seq "$spines"); do
    echo "Switch $leaves \"spine$s\""
    for l in $(seq "$leaves"); do echo "[$l] \"leaf$l\"[$((hosts + s))]"; done
    echo
  done
  for l in $(seq "$leaves"); do
    for h in $(seq "$hosts"); do
      echo "Hca 1 \"host$l-$h\""
      echo "[1] \"leaf$l\"[$h]"
      echo
    done
  done
} >"$work/fabric.net"

"$cli" sim up "$work/fabric.net" --name "$name" --osm-plugin build/libibfabric_osm.so \
  --osm-plugin-options "$sock" >/dev/null

start_daemon() {  # extra ibfabricd args...
  "$cli" sim run --name "$name" -- "$root/build/ibfabricd" --listen 127.0.0.1:0 \
    --crawl-interval "$crawl" "$@" >"$work/daemon.out" 2>"$work/daemon.err" &
  daemon_pid=$!
  for _ in $(seq 600); do
    port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/daemon.out")
    [ -n "$port" ] && break
    sleep 0.1
  done
  for _ in $(seq 600); do
    curl -sf "localhost:$port/api/v1/health" >/dev/null && break
    sleep 0.1
  done
}

measure() {  # label
  local label=$1 out=()
  for i in $(seq "$runs"); do
    local last
    last=$(curl -s "localhost:$port/api/v1/events" | jq .last_id)
    curl -s "localhost:$port/api/v1/events?type=link_down&wait=120&since=$last" >"$work/ev.json" &
    local poll=$!
    sleep 0.2  # let the long-poll start (not part of the measurement)
    local t0
    t0=$(date +%s.%N)
    "$cli" sim cmd --name "$name" "Unlink \"leaf1\"[$((hosts + 1))]" >/dev/null
    wait "$poll"
    local t1
    t1=$(jq '.events[0].time' "$work/ev.json")
    out+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }')")
    "$cli" sim cmd --name "$name" "ReLink \"leaf1\"[$((hosts + 1))]" >/dev/null
    # Back to the full fabric before the next run (the crawl or the plugin shows the link).
    for _ in $(seq 1200); do
      links=$(curl -s "localhost:$port/api/v1/topology" | jq .links)
      [ "$links" = "$total_links" ] && break
      sleep 0.1
    done
  done
  printf '| %s | %s |\n' "$label" "${out[*]}"
}

total_links=$((leaves * (hosts + spines)))
echo "Unlink leaf-spine cable -> link_down event (ms, each run), fabric: $leaves leaves x" \
  "$spines spines x $hosts hosts/leaf, crawl interval $crawl s"
echo
echo "| ibfabricd | Unlink -> link_down (ms) |"
echo "|---|---|"
start_daemon --osm-events "$sock"
for _ in $(seq 300); do
  [ "$(curl -s "localhost:$port/api/v1/health" | jq .osm.connected)" = true ] && break
  sleep 0.1
done
measure "with plugin (--osm-events)"
stop_daemon
start_daemon
measure "without plugin (crawl every $crawl s)"
stop_daemon
