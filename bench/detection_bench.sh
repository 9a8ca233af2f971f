#!/usr/bin/env bash
# Detection benchmark: how fast ibfabricd reports a cable going down and coming back without the
# OpenSM plugin (sweep-triggered PortInfo probes, api/service/sweep_suspects.h and
# route_breaks.h; with --traps on also the SM's trap Reports, telemetry/trap_subscription.h; the
# crawl every --crawl-interval is the fallback), and what it costs.
#
#   bench/detection_bench.sh [--sus 8] [--sweep-interval 10] [--crawl-interval 600] [--runs 10]
#                            [--traps off|on] [--mad-policy fixed|adaptive] [--sim-name NAME]
#
# Brings up a superpod of --sus scalable units (8 = 2,048 HCAs, 40 = 10,240; or reuses a running
# sim with --sim-name), starts ibfabricd with a state directory and no plugin, and --runs times
# each: unlinks one HCA cable ("dgx00NN-mlx5_3"[1]) and one leaf-spine cable, and times the
# ibsim command to the link_down event (a long-poll of /api/v1/events), then relinks both and
# times link_up (the cable back, physically linked: "init" until the SM activates it) and the
# cable Active (link_active, or a link_up already Active). A leaf-spine cable is waited for 3 sweeps (else it is the crawl's: "timed
# out"). Also: the engine's MADs per sweep with and without a missing cable (the probes' cost),
# and the state store's write time per change. Prints one Markdown block; every process
# it starts is stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sus=8 sweep=10 crawl=600 runs=10 name="" traps=off policy=adaptive  # the daemon's default
while [ $# -gt 0 ]; do
  case "$1" in
    --sus) sus="$2"; shift 2 ;;
    --sweep-interval) sweep="$2"; shift 2 ;;
    --crawl-interval) crawl="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --traps) traps="$2"; shift 2 ;;
    --mad-policy) policy="$2"; shift 2 ;;
    --sim-name) name="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "detection_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
cli="$root/build/ibfabric" daemon="$root/build/ibfabricd"
for b in "$cli" "$daemon"; do
  [ -x "$b" ] || { echo "missing $b: ./scripts/build.sh release" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-detection}"
work=$(mktemp -d /tmp/detection.XXXXXX)
keep=1
if [ -z "$name" ]; then name="detection-sus$sus"; keep=0; fi
pids=()
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
cleanup() {
  stop_pids
  [ "$keep" = 1 ] || "$cli" sim down --name "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! fabric_is_up "$cli" "$name"; then
  "$cli" topo gen --preset superpod --sus "$sus" >"$work/fabric.net"
  "$cli" sim up "$work/fabric.net" --name "$name" --timeout 900 >"$work/sim.log" 2>&1
fi

# With the traps on, the SA proxy registers as an ibsim SM client (ibsim hands Reports to no
# other client; api/daemon/mad_proxy_child.cpp).
case "$traps" in on) sm_traps=true; export IBFABRIC_SIM_SM_CLIENT=1 ;; off) sm_traps=false ;;
  *) echo "detection_bench.sh: --traps on|off" >&2; exit 2 ;; esac
printf 'sweep_interval: %s\ncrawl_interval: %s\nsm_traps: %s\nmad: {policy: %s}\nstate: {dir: %s}\n' \
  "$sweep" "$crawl" "$sm_traps" "$policy" "$work/state" >"$work/config.yaml"
(cd "$work" && exec "$cli" sim run --name "$name" -- "$daemon" --listen 127.0.0.1:0 \
   --config "$work/config.yaml" >"$work/daemon.out" 2>"$work/daemon.err") &
pids+=($!)
wait_for "ibfabricd to listen" 60 grep -q "listening on" "$work/daemon.out"
url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/daemon.out" | head -1)
wait_for "ibfabricd to be ready" 900 curl -sf -m 5 "$url/api/v1/health/ready"

now() { date +%s.%N; }
# sim_cmd COMMAND: the ibsim console, tried 3 times (a 10,240-HCA ibsim busy with OpenSM's heavy
# sweep can miss the console's 30 s).
sim_cmd() {
  local i
  for i in 1 2 3; do
    "$cli" sim cmd --name "$name" "$1" >/dev/null 2>>"$work/console.err" && return 0
  done
  echo "detection_bench.sh: the ibsim console did not take: $1" >&2
  return 1
}
# The newest event's id: what a wait for the next change starts after.
last_id() { curl -s -m 10 "$url/api/v1/events?since=0&limit=1" | jq -r '.newest_id'; }
# wait_event TYPE NODE SINCE LIMIT T0: seconds from T0 (when the ibsim command was issued) until
# an event TYPE naming NODE arrives after id SINCE ("timeout" after LIMIT seconds).
wait_event() {
  local type="$1" node="$2" since="$3" limit="$4" t0="$5" deadline
  deadline=$(( $(date +%s) + limit ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    local body
    body=$(curl -s -m 40 "$url/api/v1/events?since=$since&type=$type&wait=30" || echo '{}')
    local found
    found=$(jq -r --arg n "$node" \
      '[.events[]? | select(.node == $n or .remote.node == $n)] | first | .message // empty' \
      <<<"$body")
    if [ -n "$found" ]; then
      echo "$found" >"$work/last_message"
      echo "$t0 $(now)" | awk '{ printf "%.2f\n", $2 - $1 }'
      return 0
    fi
    since=$(jq -r ".last_id // $since" <<<"$body")
  done
  echo timeout
}
sweep_mads() {  # MADs the engine sent over the next 3 sweeps, per sweep
  local h0 h1 s0 s1 q0 q1
  h0=$(curl -s -m 10 "$url/api/v1/health"); s0=$(jq -r '.mad.sent' <<<"$h0")
  q0=$(jq -r '.sweep.sequence' <<<"$h0")
  wait_for "3 sweeps" $((4 * sweep + 60)) sh -c \
    "[ \$(curl -s -m 10 $url/api/v1/health | jq -r .sweep.sequence) -ge $((q0 + 3)) ]"
  h1=$(curl -s -m 10 "$url/api/v1/health"); s1=$(jq -r '.mad.sent' <<<"$h1")
  q1=$(jq -r '.sweep.sequence' <<<"$h1")
  echo $(( (s1 - s0) / (q1 - q0) ))
}
store_write() { curl -s -m 10 "$url/api/v1/health" | jq -r '.store.last_write_seconds'; }
osm_log="$IBFABRIC_SIM_DIR/$name/opensm.log"
# wait_active NODE SINCE LIMIT UP T0: seconds from the ReLink (T0) until the cable is Active,
# given its link_up seen UP seconds after it (its message in $work/last_message): UP itself when
# that link_up was Active already, else until its link_active.
wait_active() {
  local node="$1" since="$2" limit="$3" up="$4" t0="$5"
  [ "$up" = timeout ] && { echo timeout; return 0; }
  grep -q "not yet Active" "$work/last_message" || { echo "$up"; return 0; }
  wait_event link_active "$node" "$since" "$limit" "$t0"
}
# sm_split RELINK SECONDS: the SM's part and ours of a ReLink seen SECONDS after epoch RELINK:
# "<ReLink → OpenSM's last SUBNET UP before Active was seen> <that SUBNET UP → then>" (the heavy
# sweep that made the port Active ends with SUBNET UP; opensm.log's local-time stamps), or "- -"
# when no SUBNET UP came between (OpenSM had not taken the port down).
sm_split() {
  local t0="$1" seen="$2" line stamp t last=""
  [ "$seen" = timeout ] && { echo "- -"; return 0; }
  while read -r line; do
    stamp=$(awk '{ print $1, $2, $3 }' <<<"$line")
    t=$(date -d "$stamp" +%s).$(awk '{ print $4 }' <<<"$line")
    if awk -v t="$t" -v a="$t0" -v b="$seen" 'BEGIN { exit !(t > a && t <= a + b) }'; then
      last="$t"
    fi
  done < <(grep 'SUBNET UP' "$osm_log" 2>/dev/null | tail -20)
  if [ -z "$last" ]; then echo "- -"; return 0; fi
  awk -v t="$last" -v a="$t0" -v b="$seen" 'BEGIN { printf "%.2f %.2f\n", t - a, a + b - t }'
}

quiet_mads=$(sweep_mads)
for f in hca_down hca_up up_down up_up hca_active up_active store; do : >"$work/$f"; done
: >"$work/hca_sm" >"$work/up_sm"
for i in $(seq 1 "$runs"); do
  host=$(printf 'dgx%04d' $((i + 1)))
  leaf="leaf-su1-r$(( (i - 1) % 8 + 1 ))" port=$((33 + (i - 1) / 8))
  since=$(last_id)
  t_cmd=$(now)
  sim_cmd "Unlink \"$host-mlx5_3\"[1]"
  wait_event link_down "$host mlx5_3" "$since" $((crawl + 60)) "$t_cmd" >>"$work/hca_down"
  since=$(last_id)
  t_cmd=$(now)
  sim_cmd "Unlink \"$leaf\"[$port]"
  # A switch-to-switch cable shows through the destinations the sweep loses (route breaks) or
  # LinkDowned (ibsim does not count it): waited for 3 sweeps, else it is left to the crawl
  # (counted as timed out).
  up_seen=$(wait_event link_down "MF0;$leaf:MQM9790-NS2F/U1" "$since" $((3 * sweep + 10)) "$t_cmd")
  echo "$up_seen" >>"$work/up_down"
  store_write >>"$work/store"
  [ "$i" = 1 ] && missing_mads=$(sweep_mads)
  since=$(last_id)
  t_relink=$(now)
  sim_cmd "ReLink \"$host-mlx5_3\"[1]"
  seen=$(wait_event link_up "$host mlx5_3" "$since" $((crawl + 60)) "$t_relink")
  echo "$seen" >>"$work/hca_up"
  active=$(wait_active "$host mlx5_3" "$since" 120 "$seen" "$t_relink")
  echo "$active" >>"$work/hca_active"
  sm_split "$t_relink" "$active" >>"$work/hca_sm"
  since=$(last_id)
  t_relink=$(now)
  sim_cmd "ReLink \"$leaf\"[$port]"
  if [ "$up_seen" != timeout ]; then
    seen=$(wait_event link_up "MF0;$leaf:MQM9790-NS2F/U1" "$since" $((3 * sweep + 10)) "$t_relink")
    echo "$seen" >>"$work/up_up"
    active=$(wait_active "MF0;$leaf:MQM9790-NS2F/U1" "$since" 120 "$seen" "$t_relink")
    echo "$active" >>"$work/up_active"
    sm_split "$t_relink" "$active" >>"$work/up_sm"
  fi
done

stats() {  # median, max of a file of seconds ("timeout" lines counted apart)
  local to n
  to=$(grep -c timeout "$1" || true)
  n=$(grep -vc timeout "$1" || true)
  grep -v timeout "$1" | sort -n | awk -v to="$to" -v n="$n" \
    '{ a[NR] = $1 } END { if (n == 0) { printf "- | - | %d of %d", to, to; exit }
       m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2;
       printf "%.2f | %.2f | %d of %d", m, a[n], to, n + to }'
}
hcas=$(curl -s -m 10 "$url/api/v1/topology" | jq -r '.cas')
echo "### $(date -u '+%Y-%m-%d %H:%M') UTC — detection without the OpenSM plugin, SM traps $traps, MAD policy $policy, superpod-$sus ($hcas HCAs, $(nproc) cores)"
echo
echo "\`bench/detection_bench.sh --sus $sus --sweep-interval $sweep --crawl-interval $crawl --runs $runs --traps $traps --mad-policy $policy\`"
echo
echo "| change | median s | max s | timed out |"
echo "| --- | ---: | ---: | ---: |"
echo "| HCA cable Unlink → link_down | $(stats "$work/hca_down") |"
echo "| leaf–spine cable Unlink → link_down | $(stats "$work/up_down") |"
echo "| HCA cable ReLink → link_up (back, init or Active) | $(stats "$work/hca_up") |"
echo "| leaf–spine cable ReLink → link_up (back, init or Active) | $(stats "$work/up_up") |"
echo "| HCA cable ReLink → Active (link_active) | $(stats "$work/hca_active") |"
echo "| leaf–spine cable ReLink → Active (link_active) | $(stats "$work/up_active") |"
for f in hca_sm up_sm; do
  awk '$1 != "-" { print $1 }' "$work/$f" >"$work/$f.osm"
  awk '$1 != "-" { print $2 }' "$work/$f" >"$work/$f.ours"
done
echo "| of the HCA cable's: ReLink → OpenSM's SUBNET UP (the SM) | $(stats "$work/hca_sm.osm") |"
echo "| of the HCA cable's: SUBNET UP → Active seen (the daemon) | $(stats "$work/hca_sm.ours") |"
echo "| of the leaf–spine cable's: ReLink → SUBNET UP (the SM) | $(stats "$work/up_sm.osm") |"
echo "| of the leaf–spine cable's: SUBNET UP → Active seen (the daemon) | $(stats "$work/up_sm.ours") |"
echo
echo "- MADs per sweep: $quiet_mads with nothing missing, ${missing_mads:-?} with one HCA and one leaf–spine cable missing (the re-checks of the switches holding missing cables)"
echo "- state store write after a change (s): $(sort -n "$work/store" | tr '\n' ' ')"
dpid=$(pgrep -n -f "$daemon --listen" || true)
if [ -n "$dpid" ]; then
  echo "- ibfabricd at the end: VmRSS $(awk '/VmRSS/ {print int($2/1024)}' /proc/$dpid/status) MB, VmHWM $(awk '/VmHWM/ {print int($2/1024)}' /proc/$dpid/status) MB"
fi
echo "- route breaks found by directed route (daemon log): $(grep -c 'route break:' "$work/daemon.err" || true); SM trap Reports: $(curl -s -m 10 "$url/api/v1/health" | jq -c '.sm_traps.reports // "off"')"
echo "- crawls during the run: $(curl -s -m 10 "$url/api/v1/health" | jq -r '.crawl.runs'); sweep-triggered probes: $(curl -s -m 10 "$url/api/v1/health" | jq -r '.osm.port_probes // "?"')"
echo
echo "(logs kept in $work)"
