#!/usr/bin/env bash
# Self-healing, measured: a cable under a training allocation goes down -> the allocation is
# `degraded` with a replacement host suggested (pool_allocation_degraded), with the OpenSM event
# plugin (trap -> re-probe of the switch) and without it (the sweeps' probes,
# api/service/sweep_suspects.h). Same fabric, same run.
#
#   bench/self_healing_bench.sh [--sus 8] [--sweep-interval 10] [--runs 10] [--hosts 4] [--keep]
#
# Brings up a superpod of --sus scalable units (8 = 2,048 HCAs) with OpenSM loading the plugin,
# and for each mode starts ibfabricd with a GPU pool (every host 8 GPUs), then --runs times:
# allocates a training job of --hosts whole hosts, unlinks one HCA cable of its second host and
# times the ibsim command to the pool_allocation_degraded event of that allocation (a long-poll
# of /api/v1/events; the event says which replacement it suggests), relinks, releases the job
# and waits until every cable is Active again. Prints one Markdown block; every process it
# starts is stopped. A fabric of the same name already up (with the plugin) is reused; --keep
# leaves it up at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sus=8 sweep=10 runs=10 jobhosts=4 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --sus) sus="$2"; shift 2 ;;
    --sweep-interval) sweep="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --hosts) jobhosts="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "self_healing_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
cli="$root/build/ibfabric" daemon="$root/build/ibfabricd" plugin="$root/build/libibfabric_osm.so"
for b in "$cli" "$daemon" "$plugin"; do
  [ -e "$b" ] || { echo "missing $b: ./scripts/build.sh release" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-selfheal}"
work=$(mktemp -d /tmp/selfheal.XXXXXX)
name="selfheal-sus$sus"
token=selfheal
pids=()
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
cleanup() {
  stop_pids
  [ "$keep" = 1 ] || "$cli" sim down --name "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The plugin's socket outlives this run's work directory, so a kept fabric can be reused.
mkdir -p "$IBFABRIC_SIM_DIR"
sock="$IBFABRIC_SIM_DIR/$name.osm.sock"
if ! fabric_is_up "$cli" "$name"; then
  "$cli" topo gen --preset superpod --sus "$sus" >"$work/fabric.net"
  "$cli" sim up "$work/fabric.net" --name "$name" --timeout 900 --osm-plugin "$plugin" \
    --osm-plugin-options "$sock" >"$work/sim.log" 2>&1
fi
nhosts=$((sus * 32))
printf '{"hosts": [{"name": "dgx[0001-%04d]", "gpu_count": 8, "model": "H100-80GB", "memory_gb": 80}]}\n' \
  "$nhosts" >"$work/inventory.json"

now() { date +%s.%N; }
url=""
start_daemon() {  # MODE: plugin | sweeps
  local mode="$1" dir="$work/$1"
  mkdir -p "$dir"
  printf 'sweep_interval: %s\ncrawl_interval: 600\nsm_traps: false\napi_token: %s\nstate: {dir: %s}\npool: {inventory: %s, journal: %s}\n' \
    "$sweep" "$token" "$dir/state" "$work/inventory.json" "$dir/journal" >"$dir/config.yaml"
  [ "$mode" = plugin ] && echo "osm_events: $sock" >>"$dir/config.yaml"
  (cd "$dir" && exec "$cli" sim run --name "$name" -- "$daemon" --listen 127.0.0.1:0 \
     --config "$dir/config.yaml" >"$dir/daemon.out" 2>"$dir/daemon.err") &
  pids+=($!)
  wait_for "ibfabricd to listen" 60 grep -q "listening on" "$dir/daemon.out"
  url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$dir/daemon.out" | head -1)
  wait_for "ibfabricd to be ready" 900 curl -sf -m 5 "$url/api/v1/health/ready"
  wait_for "the pool" 300 sh -c "curl -sf -m 5 $url/api/v1/pool | jq -e '.total_gpus == $((nhosts * 8))'"
  if [ "$mode" = plugin ]; then
    wait_for "the plugin" 120 sh -c "curl -sf -m 5 $url/api/v1/health | jq -e '.osm.connected == true'"
  fi
}
post() {  # PATH BODY
  curl -s -m 30 -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -X POST "$url$1" -d "$2"
}
# Every cable Active: none down and none in init (`count` is the number in the answer, so one
# is enough to tell).
all_active() {
  local st c
  for st in down init; do
    c=$(curl -sf -m 10 "$url/api/v1/links?state=$st&limit=1" | jq -r .count) || return 1
    [ "$c" = 0 ] || return 1
  done
}
# The newest event id (the events after it are the ones to wait for).
last_event_id() {
  local since=0 body id
  while :; do  # pages of 10000 until the end
    body=$(curl -s -m 10 "$url/api/v1/events?since=$since&limit=10000")
    id=$(jq -r '.last_id // empty' <<<"$body")
    [ -n "$id" ] && [ "$id" != "$since" ] || break
    since=$id
  done
  echo "$since"
}
# wait_degraded JOB SINCE LIMIT T0: seconds from T0 (the Unlink) until the allocation's
# pool_allocation_degraded event (after event id SINCE), or "timeout"; its message goes to
# $work/last_message.
wait_degraded() {
  local job="$1" since="$2" limit="$3" t0="$4" deadline body found
  deadline=$(( $(date +%s) + limit ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    body=$(curl -s -m 40 "$url/api/v1/events?since=$since&type=pool_allocation_degraded&wait=30" || echo '{}')
    found=$(jq -r --arg j "allocation $job degraded" \
      '[.events[]? | select(.message | startswith($j))] | first | .message // empty' <<<"$body")
    if [ -n "$found" ]; then
      echo "$found" >"$work/last_message"
      echo "$t0 $(now)" | awk '{ printf "%.2f\n", $2 - $1 }'
      return 0
    fi
    since=$(jq -r ".last_id // $since" <<<"$body")
  done
  echo timeout
}

measure() {  # MODE
  local mode="$1" out="$work/$1.times" notes="$work/$1.notes"
  : >"$out"; : >"$notes"
  start_daemon "$mode"
  wait_for "every cable Active" 300 all_active
  for i in $(seq 1 "$runs"); do
    local job="heal-$mode-$i" alloc host since t t0
    alloc=$(post /api/v1/pool/allocations "$(jq -nc --arg j "$job" --argjson n "$((jobhosts * 8))" \
      '{job_id: $j, gpus: $n, gpus_per_host: 8, class: "training", priority: 10,
        sharing: "exclusive", preemptible: false}')")
    host=$(jq -r '.allocation.hosts[1].host // empty' <<<"$alloc")
    [ -n "$host" ] || { echo "self_healing_bench.sh: no allocation: $alloc" >&2; return 1; }
    since=$(last_event_id)
    t0=$(now)
    "$cli" sim cmd --name "$name" "Unlink \"$host-mlx5_3\"[1]" >/dev/null
    t=$(wait_degraded "$job" "$since" 700 "$t0")
    echo "$t" >>"$out"
    echo "- $mode run $i: $job on $(jq -r '[.allocation.hosts[].host] | join(",")' <<<"$alloc"), $host-mlx5_3 unlinked: $t s — $(cat "$work/last_message" 2>/dev/null)" >>"$notes"
    rm -f "$work/last_message"
    "$cli" sim cmd --name "$name" "ReLink \"$host-mlx5_3\"[1]" >/dev/null
    curl -s -m 30 -H "Authorization: Bearer $token" -X DELETE \
      "$url/api/v1/pool/allocations/$job" >/dev/null
    wait_for "every cable Active again" 300 all_active
  done
  stop_pids
}

stats() {  # median, max of a file of seconds ("timeout" lines counted apart)
  local to n
  to=$(grep -c timeout "$1" || true)
  n=$(grep -vc timeout "$1" || true)
  grep -v timeout "$1" | sort -n | awk -v to="$to" -v n="$n" \
    '{ a[NR] = $1 } END { if (n == 0) { printf "- | - | %d of %d", to, to; exit }
       m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2;
       printf "%.2f | %.2f | %d of %d", m, a[n], to, n + to }'
}

measure plugin
measure sweeps
echo "### $(date -u '+%Y-%m-%d %H:%M') UTC — self-healing: cable under a training allocation down → allocation degraded with a replacement, superpod-$sus ($((nhosts * 8)) HCAs, $(nproc) cores)"
echo
echo "\`bench/self_healing_bench.sh --sus $sus --sweep-interval $sweep --runs $runs --hosts $jobhosts\`"
echo
echo "| ibfabricd | median s | max s | timed out |"
echo "| --- | ---: | ---: | ---: |"
echo "| with the OpenSM plugin (\`osm_events\`) | $(stats "$work/plugin.times") |"
echo "| without it (sweeps every $sweep s, their probes) | $(stats "$work/sweeps.times") |"
echo
cat "$work/plugin.notes" "$work/sweeps.notes"
echo
echo "(logs kept in $work)"
