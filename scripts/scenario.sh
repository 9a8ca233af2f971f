#!/usr/bin/env bash
# Scenario player for a simulated fabric (ibfabric sim): makes the fabric look alive through
# ibsim's console, as a real one would to ibfabricd's counter sweeps.
#
#   scripts/scenario.sh --name demo --fabric superpod.net [--interval 2] [--duration 60]
#
# Every tick (--interval seconds) it writes, with `ibfabric sim cmd` (PerformanceSet):
#   - background traffic: the data and packet counters of every switch port rise at a
#     per-port rate between ~5 % and ~45 % of a 4x HDR link, slowly varying;
#   - one hot spine port (last cabled port of the last spine): ~95 % utilization and
#     PortXmitWait rising by ~40 % of the time (congestion);
#   - rising errors on one cable (a leaf uplink): SymbolErrorCounter and PortRcvErrors;
# and every few ticks one flapping leaf uplink: Unlink, then ReLink with its LinkDownedCounter
# raised (a real port counts each retrain).
# Runs until --duration passes (0 = forever) or it gets SIGINT/SIGTERM; leaves the flapping
# link linked when it stops. Needs IBFABRIC_SIM_DIR like the `ibfabric sim` it calls.
set -euo pipefail
cd "$(dirname "$0")/.."

name="" fabric="" interval=2 duration=0 cli="${IBFABRIC_CLI:-build/ibfabric}"
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name="$2"; shift 2 ;;
    --fabric) fabric="$2"; shift 2 ;;
    --interval) interval="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --cli) cli="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "scenario.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$name" ] || [ -z "$fabric" ]; then
  echo "scenario.sh: --name and --fabric are required (see --help)" >&2
  exit 2
fi
[ -r "$fabric" ] || { echo "scenario.sh: cannot read fabric file $fabric" >&2; exit 2; }
case "$interval" in ''|*[!0-9]*) echo "scenario.sh: --interval must be whole seconds" >&2; exit 2 ;; esac
case "$duration" in ''|*[!0-9]*) echo "scenario.sh: --duration must be whole seconds" >&2; exit 2 ;; esac
[ "$interval" -ge 1 ] || { echo "scenario.sh: --interval must be >= 1" >&2; exit 2; }

work="$(mktemp -d /tmp/ibfabric-scenario-XXXXXX)"
flapped=0
cleanup() {
  if [ "$flapped" = 1 ]; then
    "$cli" sim cmd --name "$name" "ReLink \"$flap_node\"[$flap_port]" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# Cabled switch ports of the fabric file: "<node id> <port> <remote id> <remote port>".
awk '
  /^(Switch|Hca|Ca)[ \t]/ { sw = ($1 == "Switch"); match($0, /"[^"]*"/); node = substr($0, RSTART + 1, RLENGTH - 2); next }
  sw && /^\[[0-9]+\][ \t]*"/ {
    match($0, /^\[[0-9]+\]/); port = substr($0, 2, RLENGTH - 2)
    rest = substr($0, RLENGTH + 1); match(rest, /"[^"]*"/); remote = substr(rest, RSTART + 1, RLENGTH - 2)
    rest = substr(rest, RSTART + RLENGTH); match(rest, /^\[[0-9]+\]/); rport = substr(rest, 2, RLENGTH - 2)
    print node, port, remote, rport
  }' "$fabric" >"$work/ports"
[ -s "$work/ports" ] || { echo "scenario.sh: no cabled switch ports in $fabric" >&2; exit 2; }

# The actors: the hot spine port, the flapping and the erroring leaf uplinks (leaf ports whose
# remote end is a switch).
read -r hot_node hot_port _ _ < <(awk '$1 ~ /^spine/' "$work/ports" | tail -n 1)
mapfile -t uplinks < <(awk '$1 ~ /^leaf/ && $3 ~ /^(spine|core)/' "$work/ports")
if [ -z "${hot_node:-}" ] || [ "${#uplinks[@]}" -lt 2 ]; then
  echo "scenario.sh: needs a fabric with leaf and spine switches (topo gen --preset superpod)" >&2
  exit 2
fi
read -r err_node err_port err_remote err_rport <<<"${uplinks[0]}"
read -r flap_node flap_port flap_remote flap_rport <<<"${uplinks[$(( ${#uplinks[@]} / 2 ))]}"
echo "scenario: $(wc -l <"$work/ports") switch ports with background traffic; hot port $hot_node[$hot_port];" \
  "errors on $err_node[$err_port] - $err_remote[$err_rport];" \
  "flapping $flap_node[$flap_port] - $flap_remote[$flap_rport]"

# PerformanceSet lines for tick $1 (time t = tick * interval seconds).
tick_commands() {
  awk -v tick="$1" -v dt="$interval" -v hot="$hot_node" -v hotp="$hot_port" \
      -v en="$err_node" -v ep="$err_port" '
    BEGIN { link = 25e9 }   # 4x HDR data rate, bytes/s
    {
      i = NR; t = tick * dt
      # utilization: per-port base plus a slow wave; bytes sent so far = integral over time.
      base = 0.05 + 0.3 * ((i * 37) % 100) / 100
      amp = 0.1 * ((i * 11) % 10) / 10
      period = 120 + (i % 7) * 30
      f = base * t + amp * period / (2 * 3.14159265) * (1 - cos(2 * 3.14159265 * t / period))
      if ($1 == hot && $2 == hotp) f = 0.95 * t
      tx = int(f * link / 4); rx = int(0.9 * f * link / 4)
      printf "PerformanceSet \"%s\"[%s] PortCountersExtended.PortXmitData=%.0f\n", $1, $2, tx
      printf "PerformanceSet \"%s\"[%s] PortCountersExtended.PortRcvData=%.0f\n", $1, $2, rx
      printf "PerformanceSet \"%s\"[%s] PortCountersExtended.PortXmitPkts=%.0f\n", $1, $2, tx / 1024
      printf "PerformanceSet \"%s\"[%s] PortCountersExtended.PortRcvPkts=%.0f\n", $1, $2, rx / 1024
      if ($1 == hot && $2 == hotp) {
        wait = (tick * dt * 0.4 * 125000000) % 4294967296   # 8 ns ticks, 40 % of the time
        printf "PerformanceSet \"%s\"[%s] PortCounters.PortXmitWait=%.0f\n", $1, $2, wait
      }
      if ($1 == en && $2 == ep) {
        printf "PerformanceSet \"%s\"[%s] PortCounters.SymbolErrorCounter=%d\n", $1, $2, (tick * 7) % 65536
        printf "PerformanceSet \"%s\"[%s] PortCounters.PortRcvErrors=%d\n", $1, $2, (tick * 3) % 65536
      }
    }' "$work/ports"
}

# ibsim's console takes the commands in chunks (one command-line argument stays < 128 KiB).
send() {
  split -l 1000 - "$work/chunk."
  for c in "$work"/chunk.*; do
    "$cli" sim cmd --name "$name" --timeout 60 "$(cat "$c")" >/dev/null
    rm -f "$c"
  done
}

start=$(date +%s)
tick=0
flaps=0
while :; do
  tick=$((tick + 1))
  t0=$(date +%s)
  tick_commands "$tick" | send
  # The flapping link: down for one tick every 5 ticks.
  if [ $((tick % 5)) = 0 ]; then
    "$cli" sim cmd --name "$name" "Unlink \"$flap_node\"[$flap_port]" >/dev/null
    flapped=1
  elif [ "$flapped" = 1 ]; then
    flaps=$((flaps + 1))
    "$cli" sim cmd --name "$name" "ReLink \"$flap_node\"[$flap_port]
PerformanceSet \"$flap_node\"[$flap_port] PortCounters.LinkDownedCounter=$((flaps % 256))
PerformanceSet \"$flap_remote\"[$flap_rport] PortCounters.LinkDownedCounter=$((flaps % 256))" >/dev/null
    flapped=0
  fi
  now=$(date +%s)
  if [ "$duration" -gt 0 ] && [ $((now - start)) -ge "$duration" ]; then
    echo "scenario: $tick ticks in $((now - start)) s, $flaps flaps"
    exit 0
  fi
  left=$((interval - (now - t0)))
  [ "$left" -gt 0 ] && sleep "$left"
done
