#!/usr/bin/env bash
# Scale benchmark: ibfabricd at production weight on the 10,240-HCA superpod (superpod-40: 896
# switches, 61,440 linked ports) with a real Prometheus (Debian's) scraping it.
#
#   bench/scale_bench.sh [--minutes 10] [--scrape-interval 30] [--sweep-interval 10]
#                        [--crawl-interval 60] [--fabric superpod-40|superpod-8]
#                        [--config FILE] [--no-cli] [--keep-fabric] [--sim-name NAME]
#
# Brings the fabric up (ibfabric sim up: ibsim + OpenSM ftree), starts ibfabricd on it with
# the default settings (or --config), a Prometheus scraping /metrics every --scrape-interval s,
# and for --minutes: samples the daemon's VmRSS/VmHWM and CPU every 5 s, asks for a placement
# every 30 s, and times GET /api/v1/links?limit=100 (every 2 s) and /api/v1/topology/full (every
# 30 s) while sweeps, crawls, LFT refreshes and scrapes run. Then the one-shot CLI against
# `ibqueryerrors --data` on a 2,048-HCA fabric (bench/counters_bench.sh) unless --no-cli.
# Prints one Markdown block (what docs/BENCHMARKS.md records); every process it starts is stopped
# on exit, the fabric taken down unless --keep-fabric (or --sim-name: a fabric already up under
# $IBFABRIC_SIM_DIR with that name is used as it is and left up).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
minutes=10 scrape=30 sweep=10 crawl=60 fabric=superpod-40 config="" cli_bench=1 keep=0 name=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --scrape-interval) scrape="$2"; shift 2 ;;
    --sweep-interval) sweep="$2"; shift 2 ;;
    --crawl-interval) crawl="$2"; shift 2 ;;
    --fabric) fabric="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --no-cli) cli_bench=0; shift ;;
    --keep-fabric) keep=1; shift ;;
    --sim-name) name="$2"; keep=1; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "scale_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
cli="$root/build/ibfabric" daemon="$root/build/ibfabricd"
for b in "$cli" "$daemon"; do
  [ -x "$b" ] || { echo "missing $b: ./scripts/build.sh release" >&2; exit 2; }
done
command -v prometheus >/dev/null || { echo "needs Debian's prometheus (scripts/deps.sh)" >&2; exit 2; }
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-scalebench}"
work=$(mktemp -d /tmp/scalebench.XXXXXX)
name="${name:-scale-$fabric}"
pids=()
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
cleanup() {
  stop_pids
  [ "$keep" = 1 ] || "$cli" sim down --name "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

case "$fabric" in
  superpod-40) gen=(--preset superpod --sus 40) ;;
  superpod-8) gen=(--preset superpod --sus 8) ;;
  *) echo "unknown fabric $fabric" >&2; exit 2 ;;
esac
"$cli" topo gen "${gen[@]}" >"$work/fabric.net"
if ! fabric_is_up "$cli" "$name"; then
  "$cli" sim up "$work/fabric.net" --name "$name" --timeout 900 >"$work/sim.log" 2>&1
fi

# ibfabricd, on a free port.
(cd "$work" && exec "$cli" sim run --name "$name" -- "$daemon" --listen 127.0.0.1:0 \
   --sweep-interval "$sweep" --crawl-interval "$crawl" ${config:+--config "$config"} \
   >"$work/daemon.out" 2>"$work/daemon.err") &
pids+=($!)
wait_for "ibfabricd to listen" 60 grep -q "listening on" "$work/daemon.out"
url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/daemon.out" | head -1)
dpid=$(pgrep -f -n "^$daemon --listen 127.0.0.1:0") || { echo "no daemon pid" >&2; exit 1; }
ready() { curl -sf -m 5 "$url/api/v1/health/ready" >/dev/null; }
wait_for "ibfabricd to be ready" 600 ready

# Prometheus scraping it.
hostport=${url#http://}
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: ${scrape}s
  evaluation_interval: ${scrape}s
rule_files:
  - $root/dashboards/prometheus/ibfabric-rules.yml
  - $root/dashboards/prometheus/ibfabric-alerts.yml
scrape_configs:
  - job_name: ibfabric
    scrape_timeout: $((scrape < 60 ? scrape : 60))s
    static_configs:
      - targets: ["$hostport"]
EOF
prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
ppid_=$!
prom="http://127.0.0.1:$prom_port"
wait_for "Prometheus" 60 curl -sf "$prom/-/ready"

# The run: samples and requests until the deadline.
end=$(( $(date +%s) + minutes * 60 ))
: >"$work/mem.tsv" >"$work/links.ms" >"$work/full.ms" >"$work/prom_mem.tsv"
ticks0=$(awk '{print $14 + $15}' "/proc/$dpid/stat")
t0=$(date +%s.%N)
i=0
while [ "$(date +%s)" -lt "$end" ]; do
  if [ $((i % 5)) = 0 ]; then
    awk '/^VmRSS/ {r=$2} /^VmHWM/ {h=$2} END {print r "\t" h}' "/proc/$dpid/status" >>"$work/mem.tsv"
    awk '/^VmRSS/ {print $2}' "/proc/$ppid_/status" >>"$work/prom_mem.tsv"
  fi
  if [ $((i % 2)) = 0 ]; then
    curl -s -o /dev/null -m 30 -w '%{time_total}\n' "$url/api/v1/links?limit=100" >>"$work/links.ms" || true
  fi
  if [ $((i % 30)) = 15 ]; then
    curl -s -o "$work/full.json" -m 60 -w '%{time_total} %{size_download}\n' \
      "$url/api/v1/topology/full" >>"$work/full.ms" || true
    curl -s -o /dev/null -m 30 -X POST -H 'Content-Type: application/json' \
      -d '{"hosts": 64, "pattern": "ring_allreduce"}' "$url/api/v1/placement" || true
  fi
  sleep 1
  i=$((i + 1))
done
t1=$(date +%s.%N)
ticks1=$(awk '{print $14 + $15}' "/proc/$dpid/stat")
hz=$(getconf CLK_TCK)

# The page as Prometheus gets it, and as text.
curl -s -H 'Accept-Encoding: gzip' -o "$work/metrics.gz" "$url/metrics"
curl -s -o "$work/metrics.txt" "$url/metrics"
q() { curl -s --data-urlencode "query=$1" "$prom/api/v1/query" | jq -r '.data.result[0].value[1] // "n/a"'; }
scrape_max=$(q "max_over_time(scrape_duration_seconds{job=\"ibfabric\"}[${minutes}m])")
scrape_avg=$(q "avg_over_time(scrape_duration_seconds{job=\"ibfabric\"}[${minutes}m])")
scrape_samples=$(q "max_over_time(scrape_samples_scraped{job=\"ibfabric\"}[${minutes}m])")
scrapes=$(q "count_over_time(up{job=\"ibfabric\"}[${minutes}m])")
failed=$(q "count_over_time((up{job=\"ibfabric\"} == 0)[${minutes}m:])")

pct() {  # pct FILE P: the P-th percentile of column 1, in ms
  sort -n "$1" | awk -v p="$2" '{a[NR]=$1} END {if (NR==0) {print "n/a"; exit}
    i=int((NR-1)*p/100)+1; printf "%.1f", a[i]*1000}'
}
mb() { awk -v k="$1" 'BEGIN {printf "%.0f", k/1024}'; }
steady_rss=$(awk -F'\t' 'NR>6 {s+=$1; n++} END {if (n) printf "%.0f", s/n/1024; else print "n/a"}' "$work/mem.tsv")
max_rss=$(awk -F'\t' '$1>m {m=$1} END {printf "%.0f", m/1024}' "$work/mem.tsv")
hwm=$(tail -1 "$work/mem.tsv" | cut -f2)
prom_peak=$(sort -n "$work/prom_mem.tsv" | tail -1)
cpu=$(awk -v a="$ticks0" -v b="$ticks1" -v hz="$hz" -v t0="$t0" -v t1="$t1" \
  'BEGIN {printf "%.1f", 100 * (b - a) / hz / (t1 - t0)}')
series=$(grep -vc '^#' "$work/metrics.txt")
heap() { awk -v s="$1" '$1 == "ibfabric_heap_bytes{state=\"" s "\"}" {printf "%.0f", $2/1048576}' "$work/metrics.txt"; }
health=$(curl -s -m 10 "$url/api/v1/health" || echo '{}')
sweeps=$(jq -r '"\(.sweep.runs // "n/a") / \(.sweep.failures // "n/a")"' <<<"$health")
partial=$(grep -c 'counter sweep [0-9]*: ' "$work/daemon.err" || true)

echo "### $(date -u '+%Y-%m-%d %H:%M') UTC — scale bench, $fabric ($(nproc) cores)"
echo
echo "\`bench/scale_bench.sh --minutes $minutes --scrape-interval $scrape --sweep-interval $sweep --crawl-interval $crawl${config:+ --config $config}\`"
echo
echo "| what | figure |"
echo "| --- | ---: |"
echo "| ibfabricd RSS steady (mean VmRSS after the first 30 s) / max VmRSS / VmHWM | $steady_rss MB / $max_rss MB / $(mb "$hwm") MB |"
echo "| ibfabricd CPU over the run | $cpu % of one core |"
echo "| malloc heap at the end: in use / kept free (ibfabric_heap_bytes) | $(heap in_use) MB / $(heap free) MB |"
echo "| sweeps run / failed (whole); sweeps with some targets failing | $sweeps; $partial |"
echo "| /metrics text / gzip / series | $(du -b "$work/metrics.txt" | cut -f1 | awk '{printf "%.1f MB", $1/1e6}') / $(du -b "$work/metrics.gz" | cut -f1 | awk '{printf "%.2f MB", $1/1e6}') / $series |"
echo "| Prometheus scrape_duration_seconds max / mean | $scrape_max s / $scrape_avg s |"
echo "| Prometheus samples per scrape; scrapes; failed scrapes | $scrape_samples; $scrapes; ${failed/n\/a/0} |"
echo "| Prometheus peak RSS | $(mb "$prom_peak") MB |"
echo "| GET /links?limit=100 p50 / p99 / max ($(wc -l <"$work/links.ms") requests) | $(pct "$work/links.ms" 50) / $(pct "$work/links.ms" 99) / $(pct "$work/links.ms" 100) ms |"
echo "| GET /topology/full p50 / max ($(wc -l <"$work/full.ms") requests) | $(pct "$work/full.ms" 50) / $(pct "$work/full.ms" 100) ms, $(awk '{print $2}' "$work/full.ms" | tail -1 | awk '{printf "%.1f MB", $1/1e6}') |"
echo
echo "daemon log: $(grep -c 'warning\|error' "$work/daemon.err" || true) warnings/errors (kept in $work)"
if [ "$cli_bench" = 1 ] && [ -x bench/counters_bench.sh ]; then
  echo
  bench/counters_bench.sh
fi
