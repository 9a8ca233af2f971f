#!/usr/bin/env bash
# The README's demo command: installs dependencies, builds, starts a simulated 4-SU DGX
# SuperPOD-style fabric (ibsim + OpenSM with ftree routing), shows ibfabric working on it, then
# runs ibfabricd, a Prometheus with the alert and recording rules (dashboards/prometheus) and a
# scenario player (scripts/scenario.sh: background traffic, a hot spine port, a flapping link,
# rising errors on one cable) and prints the URLs (the web view, /ui/, first) and example commands.
#
#   ./scripts/demo.sh            interactive: keeps everything running until Ctrl-C
#   ./scripts/demo.sh --once     a bounded run (~2 minutes of scenario), then stops and exits
#   IBFABRIC_DEMO_SUS=8 ./scripts/demo.sh   a larger superpod
#   IBFABRIC_DEMO_PROMETHEUS_PORT=9090      Prometheus port (default: 9090, or a free one)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

once=0
[ "${1:-}" = "--once" ] && once=1
[ -t 0 ] || once=1   # no terminal to press Ctrl-C in: run through and clean up

./scripts/deps.sh
./scripts/build.sh release

sus="${IBFABRIC_DEMO_SUS:-4}"
name="demo"
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-demo}"
work="$(mktemp -d /tmp/ibfabric-demo-XXXXXX)"
fabric="$work/superpod-${sus}su.net"
cli="$root/build/ibfabric"

pids=()
cleanup() {
  echo
  echo "demo: stopping the scenario, Prometheus, ibfabricd and the simulated fabric"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  "$cli" sim down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A leftover demo fabric from an interrupted run would hold the name.
"$cli" sim down --name "$name" >/dev/null 2>&1 || true

banner() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

banner "Generating a ${sus}-SU rail-optimized superpod fabric"
"$cli" topo gen --preset superpod --sus "$sus" -o "$fabric"
head -n 12 "$fabric"

banner "Starting ibsim + OpenSM (ftree) on it"
time "$cli" sim up "$fabric" --name "$name"

banner "ibfabric discover (summary), from an HCA of the simulated fabric"
"$cli" sim run --name "$name" -- "$cli" discover --format summary

banner "The same crawl as JSON: host dgx0001 and where its 8 HCAs attach (rails)"
"$cli" sim run --name "$name" -- "$cli" discover --format json -o "$work/fabric.json"
jq -c '. as $t | .hosts[0] | {host: .name, hcas: [.hcas[] | $t.nodes[.] as $n
  | {hca: $n.description, rail: $n.rail, leaf: $t.nodes[$n.ports[0].remote.node].description}]}' \
  "$work/fabric.json"

banner "Compare the live fabric to the plan"
"$cli" sim run --name "$name" -- "$cli" topo compare --expected "$fabric" || true

banner "Break a leaf-spine cable in the simulator and compare again"
"$cli" sim cmd --name "$name" 'Unlink "leaf-su1-r1"[33]'
"$cli" sim run --name "$name" -- "$cli" topo compare --expected "$fabric" || true
"$cli" sim cmd --name "$name" 'ReLink "leaf-su1-r1"[33]'

# A port for Prometheus: the requested one, 9090, or the first free one above 19090.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
prom_port="${IBFABRIC_DEMO_PROMETHEUS_PORT:-}"
if [ -z "$prom_port" ]; then
  prom_port=9090
  while ! port_free "$prom_port"; do prom_port=$((prom_port == 9090 ? 19090 : prom_port + 1)); done
fi

banner "ibfabricd on the fabric (crawl every 30 s, counter sweep every 10 s)"
"$cli" sim run --name "$name" -- "$root/build/ibfabricd" --listen 127.0.0.1:0 \
  --crawl-interval 30 --sweep-interval 10 >"$work/ibfabricd.log" 2>&1 &
pids+=($!)
api=""
for _ in $(seq 600); do
  api=$(sed -n 's/.*listening on \(http:\/\/[0-9.:]*\).*/\1/p' "$work/ibfabricd.log" | head -n 1)
  [ -n "$api" ] && break
  kill -0 "${pids[-1]}" 2>/dev/null || break
  sleep 0.1
done
[ -n "$api" ] || { echo "demo: ibfabricd did not start:"; tail -n 20 "$work/ibfabricd.log"; exit 1; }
for _ in $(seq 300); do
  curl -sf "$api/api/v1/health" >/dev/null && break
  sleep 0.2
done
echo "Fabric view (open in a browser): $api/ui/"
curl -s "$api/api/v1/health" | jq -c '{status, ready, crawl: .crawl.last_duration_seconds, sweep: .sweep.last_duration_seconds}'
# The /metrics page of a large fabric takes seconds to render (docs/api.md): scrape no faster
# than that allows.
read -r bytes secs < <(curl -s -o /dev/null -w '%{size_download} %{time_total}\n' "$api/metrics")
scrape=$(awk -v t="$secs" 'BEGIN { s = int(t * 4) + 1; print (s < 15 ? 15 : s) }')
echo "/metrics: $((bytes / 1000000)) MB rendered in ${secs} s -> Prometheus scrapes every ${scrape} s"

banner "Prometheus on 127.0.0.1:$prom_port with the ibfabric rules (alert 'for:' shortened to 10 s for the demo)"
mkdir -p "$work/prometheus/data"
for f in ibfabric-rules.yml ibfabric-alerts.yml; do
  sed -E 's/^([[:space:]]*)for:[[:space:]]*[^[:space:]]+[[:space:]]*$/\1for: 10s/' \
    "$root/dashboards/prometheus/$f" >"$work/prometheus/$f"
done
cat >"$work/prometheus/prometheus.yml" <<EOC
global:
  scrape_interval: ${scrape}s
  evaluation_interval: 5s
rule_files: [ibfabric-rules.yml, ibfabric-alerts.yml]
scrape_configs:
  - job_name: ibfabric
    scrape_timeout: ${scrape}s
    static_configs:
      - targets: ["${api#http://}"]
EOC
prometheus --config.file="$work/prometheus/prometheus.yml" --storage.tsdb.path="$work/prometheus/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)
prom="http://127.0.0.1:$prom_port"
for _ in $(seq 300); do curl -sf "$prom/-/ready" >/dev/null && break; sleep 0.2; done
curl -sf "$prom/-/ready" >/dev/null || { echo "demo: Prometheus did not start:"; tail -n 20 "$work/prometheus.log"; exit 1; }

banner "Scenario player: traffic, a hot spine port, a flapping link, rising errors on one cable"
scenario_args=(--name "$name" --fabric "$fabric" --interval 5 --cli "$cli")
[ "$once" = 1 ] && scenario_args+=(--duration 150)
"$root/scripts/scenario.sh" "${scenario_args[@]}" &
pids+=($!)

banner "Try it"
cat <<EOT
  Fabric view:     $api/ui/   (the fat tree live in a browser: docs/ui.md)
  REST API:        $api/api/v1/health   $api/api/v1/links?sort=congestion&limit=5
  Metrics:         $api/metrics
  Prometheus UI:   $prom/alerts   $prom/graph
  Grafana:         import dashboards/*.json (input DS_PROMETHEUS = a Prometheus datasource at
                   $prom), or provision with dashboards/provisioning/

  curl -s '$api/api/v1/links?sort=congestion&limit=5' | jq '.links[] | {a: .a.node, b: .b.node, health}'
  curl -s '$api/api/v1/events?type=link_down,link_up,flapping,error_threshold&wait=30' | jq .
  curl -s '$prom/api/v1/alerts' | jq '.data.alerts[] | {alert: .labels.alertname, node: .labels.node, port: .labels.port, remote: .labels.remote_node, state}'
  curl -s '$prom/api/v1/query' --data-urlencode 'query=topk(5, ibfabric:port_transmit_bytes:rate1m)' | jq '.data.result[] | {node: .metric.node, port: .metric.port, bytes_per_second: .value[1]}'
EOT
cat <<EOT
  # 16 hosts for a ring all-reduce, avoiding hot and faulty links (ranked, in rank order):
  $cli place --server $api --hosts 16 --pattern ring_allreduce --format table
  curl -s -X POST $api/api/v1/placement -d '{"hosts": 64, "pattern": "alltoall"}' | jq '.options[0].score'
  curl -s '$api/api/v1/routes?src=dgx0001&dst=dgx0200' | jq '.routes[0].hops | length'
  curl -s '$api/api/v1/export/slurm-topology?plugin=tree' | head
EOT
cat <<EOT
  export IBFABRIC_SIM_DIR=$IBFABRIC_SIM_DIR
  $cli sim cmd --name $name 'Unlink "leaf-su1-r2"[34]'     # break a cable yourself
EOT

if [ "$once" = 1 ]; then
  wait_max=$((240 + 6 * scrape))
  banner "Bounded run: waiting for the scenario's alerts (at most $wait_max s)"
  deadline=$(( $(date +%s) + wait_max ))
  want="IbPortCongested IbSymbolErrorsRising IbLinkFlapping"
  while [ "$(date +%s)" -lt "$deadline" ]; do
    firing=$(curl -s "$prom/api/v1/alerts" | jq -r '[.data.alerts[] | select(.state=="firing") | .labels.alertname] | unique | join(" ")')
    all=1
    for a in $want; do case " $firing " in *" $a "*) ;; *) all=0 ;; esac; done
    [ "$all" = 1 ] && break
    sleep 3
  done
  echo "firing: ${firing:-none}"
  curl -s "$prom/api/v1/alerts" | jq -r '.data.alerts[] | select(.state=="firing") | "  \(.labels.alertname) \(.labels.node // "") \(.labels.port // "") -> \(.labels.remote_node // "") \(.labels.remote_port // "")"' | sort | uniq | head -n 20
  exit 0
fi

echo
echo "Press Ctrl-C here to stop everything."
while true; do sleep 3600; done
