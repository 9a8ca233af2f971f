#!/usr/bin/env bash
# Active/standby benchmark: what a standby ibfabricd costs beside the active one on one subnet,
# and how fast it takes over when the active one is killed (docs/scale-out.md).
#
#   bench/standby_bench.sh [--sus 40] [--minutes 5] [--sweep-interval 10] [--crawl-interval 60]
#                          [--standby-crawl-interval 300] [--sim-name NAME]
#
# Brings up a superpod of --sus scalable units (40 = 10,240 HCAs; or reuses a running sim with
# --sim-name), starts two ibfabricd on two different HCAs with `ha.mode: lowest_guid` and each
# other as peers, waits until one is active and one standby, then for --minutes samples both
# daemons' VmRSS and CPU and counts the MADs each sends (ibfabric_mad_sent_total). Then
# `kill -9` of the active one, and times: the standby's role turning active, its first counter
# sweep completing (health sweep.runs), and whether GET /api/v1/links?limit=1 on it failed at
# any point meanwhile (polled every 0.2 s). Prints one Markdown block; every process it starts is
# stopped, the fabric taken down unless --sim-name.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sus=40 minutes=5 sweep=10 crawl=60 standby_crawl=300 name="" keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --sus) sus="$2"; shift 2 ;;
    --minutes) minutes="$2"; shift 2 ;;
    --sweep-interval) sweep="$2"; shift 2 ;;
    --crawl-interval) crawl="$2"; shift 2 ;;
    --standby-crawl-interval) standby_crawl="$2"; shift 2 ;;
    --sim-name) name="$2"; keep=1; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "standby_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
cli="$root/build/ibfabric" daemon="$root/build/ibfabricd"
for b in "$cli" "$daemon"; do
  [ -x "$b" ] || { echo "missing $b: ./scripts/build.sh release" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-standbybench}"
work=$(mktemp -d /tmp/standbybench.XXXXXX)
name="${name:-standby-sus$sus}"
pids=()
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
cleanup() {
  stop_pids
  [ "$keep" = 1 ] || "$cli" sim down --name "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$cli" topo gen --preset superpod --sus "$sus" >"$work/fabric.net"
if ! fabric_is_up "$cli" "$name"; then
  "$cli" sim up "$work/fabric.net" --name "$name" --timeout 900 >"$work/sim.log" 2>&1
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port_a=$(free_port)
port_b=$(free_port)
while [ "$port_b" = "$port_a" ]; do port_b=$(free_port); done
url_a="http://127.0.0.1:$port_a" url_b="http://127.0.0.1:$port_b"
cat >"$work/ha.yaml" <<EOF
sweep_interval: $sweep
crawl_interval: $crawl
subnet_name: bench
ha:
  mode: lowest_guid
  peers: ["$url_a", "$url_b"]
  standby_crawl_interval: $standby_crawl
EOF
# Two HCAs of different hosts (neither is OpenSM's: sim up runs it on the first HCA).
start() {  # start HOST PORT TAG
  (cd "$work" && exec "$cli" sim run --name "$name" --host "$1" -- "$daemon" \
     --config "$work/ha.yaml" --listen "127.0.0.1:$2" >"$work/$3.out" 2>"$work/$3.err") &
  pids+=($!)
}
start dgx0100-mlx5_0 "$port_a" a
start dgx0200-mlx5_0 "$port_b" b
health() { curl -s -m 5 "$1/api/v1/health" 2>/dev/null || echo '{}'; }
role() { health "$1" | jq -r '.role // ""'; }
decided() {
  local ra rb
  ra=$(role "$url_a") rb=$(role "$url_b")
  [ "$ra" = active ] && [ "$rb" = standby ] && return 0
  [ "$ra" = standby ] && [ "$rb" = active ]
}
wait_for "one active and one standby" 900 decided
if [ "$(role "$url_a")" = active ]; then active=$url_a standby=$url_b; else active=$url_b standby=$url_a; fi
pid_of() { pgrep -f -n "^$daemon --config $work/ha.yaml --listen 127.0.0.1:$1"; }
apid=$(pid_of "${active##*:}") spid=$(pid_of "${standby##*:}")
ready() { curl -sf -m 5 "$active/api/v1/health/ready" >/dev/null; }
wait_for "the active one to be ready" 900 ready

mad_sent() { curl -s -m 60 "$1/metrics" | awk '$1 == "ibfabric_mad_sent_total" {print $2; exit}'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
: >"$work/mem_a.tsv"
: >"$work/mem_s.tsv"
ma0=$(mad_sent "$active") ms0=$(mad_sent "$standby")
ta0=$(ticks "$apid") ts0=$(ticks "$spid") t0=$(date +%s.%N)
end=$(( $(date +%s) + minutes * 60 ))
while [ "$(date +%s)" -lt "$end" ]; do
  awk '/^VmRSS/ {print $2}' "/proc/$apid/status" >>"$work/mem_a.tsv"
  awk '/^VmRSS/ {print $2}' "/proc/$spid/status" >>"$work/mem_s.tsv"
  sleep 5
done
ma1=$(mad_sent "$active") ms1=$(mad_sent "$standby")
ta1=$(ticks "$apid") ts1=$(ticks "$spid") t1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
cpu() { awk -v a="$1" -v b="$2" -v hz="$hz" -v t0="$t0" -v t1="$t1" 'BEGIN {printf "%.1f", 100 * (b - a) / hz / (t1 - t0)}'; }
mean_mb() { awk 'NR > 2 {s += $1; n++} END {if (n) printf "%.0f", s / n / 1024; else print "n/a"}' "$1"; }
hwm() { awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
standby_health=$(health "$standby")
standby_crawls=$(jq -r '.crawl.runs // .crawl.successes // "n/a"' <<<"$standby_health")
standby_age=$(jq -r '.snapshot_age_seconds // "n/a"' <<<"$standby_health")

# kill -9 of the active one: the standby's role, its first sweep, its reads meanwhile.
runs0=$(health "$standby" | jq -r '.sweep.runs // 0')
: >"$work/reads.txt"
(while :; do curl -s -o /dev/null -m 2 -w '%{http_code}\n' "$standby/api/v1/links?limit=1" >>"$work/reads.txt"; sleep 0.2; done) &
reader=$!
kill -KILL "$apid"
tk=$(date +%s.%N)
t_role="" t_sweep=""
limit=$(( $(date +%s) + 20 * sweep + 120 ))
while [ "$(date +%s)" -lt "$limit" ]; do
  h=$(health "$standby")
  now=$(date +%s.%N)
  [ -z "$t_role" ] && [ "$(jq -r '.role // ""' <<<"$h")" = active ] && t_role=$(awk -v a="$tk" -v b="$now" 'BEGIN {printf "%.2f", b - a}')
  if [ -n "$t_role" ] && [ "$(jq -r '.sweep.runs // 0' <<<"$h")" -gt "$runs0" ]; then
    t_sweep=$(awk -v a="$tk" -v b="$now" 'BEGIN {printf "%.2f", b - a}')
    break
  fi
  sleep 0.2
done
kill "$reader" 2>/dev/null || true
wait "$reader" 2>/dev/null || true
reads=$(wc -l <"$work/reads.txt")
bad=$(grep -vc '^200$' "$work/reads.txt" || true)

echo "### $(date -u '+%Y-%m-%d %H:%M') UTC — standby bench, superpod-$sus ($(nproc) cores)"
echo
echo "\`bench/standby_bench.sh --sus $sus --minutes $minutes --sweep-interval $sweep --crawl-interval $crawl --standby-crawl-interval $standby_crawl\`"
echo
echo "| what | active | standby |"
echo "| --- | ---: | ---: |"
echo "| VmRSS mean over $minutes min / VmHWM | $(mean_mb "$work/mem_a.tsv") MB / $(hwm "$apid" 2>/dev/null || echo n/a) MB | $(mean_mb "$work/mem_s.tsv") MB / $(hwm "$spid") MB |"
echo "| CPU over the run | $(cpu "$ta0" "$ta1") % of one core | $(cpu "$ts0" "$ts1") % of one core |"
echo "| MADs sent over the run (ibfabric_mad_sent_total) | $(awk -v a="$ma0" -v b="$ma1" 'BEGIN {printf "%.0f", b - a}') | $(awk -v a="${ms0:-0}" -v b="${ms1:-0}" 'BEGIN {printf "%.0f", b - a}') |"
echo "| standby: crawls so far / snapshot age at the end | | $standby_crawls / $standby_age s |"
echo
echo "kill -9 of the active one: standby active after ${t_role:-"(not within the limit)"} s, its first sweep done after ${t_sweep:-"(not within the limit)"} s (sweep interval $sweep s); GET /links?limit=1 on it meanwhile: $reads requests, $bad not 200."
echo
echo "logs kept in $work"
