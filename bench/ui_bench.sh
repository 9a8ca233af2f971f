#!/usr/bin/env bash
# First view of the web view (/ui/) in headless Chromium on a simulated superpod.
#
#   bench/ui_bench.sh [--sus 40] [--runs 5] [--unlink] [--url http://HOST:PORT] [--sim-name NAME]
#
# Brings the fabric up (ibfabric topo gen --preset superpod --sus N; ibfabric sim up), starts
# ibfabricd on it and waits until it is ready (or, with --url, uses a daemon already running),
# then opens /ui/ --runs times, each in a fresh headless Chromium session (chromedriver's W3C
# WebDriver API through curl; the first run with a cold map cache of the daemon), and reads
# from the page: the first view (navigation start to the map drawn: the page's
# "ibf-map-drawn" performance mark), the bytes the page's data requests (/api/v1/...)
# and all its requests transferred (Performance API resource timing, transferSize, i.e. on the
# wire after gzip), the map's own size, and the elements drawn. With --unlink, then: one page
# open, `Unlink "leaf-su1-r1"[33]` in the simulator, and the time until that cable's trunk is
# drawn "down" (from the command, and from the link_down event's own time: at the default
# intervals the daemon reports the cable down with its next crawl, within 60 s); the cable is
# ReLinked after. Prints one Markdown block (what
# docs/BENCHMARKS.md records); every process it started is stopped and the fabric taken down on
# exit (not a --sim-name fabric, nor the daemon of --url).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
args="$*"
sus=40 runs=5 url="" name="" keep=0 unlink=0
while [ $# -gt 0 ]; do
  case "$1" in
    --sus) sus="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --unlink) unlink=1; shift ;;
    --url) url="$2"; shift 2 ;;
    --sim-name) name="$2"; keep=1; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "ui_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
cli="$root/build/ibfabric" daemon="$root/build/ibfabricd"
for b in chromium chromedriver curl jq; do
  command -v "$b" >/dev/null || { echo "needs $b (scripts/deps.sh)" >&2; exit 2; }
done
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/ibfabric-uibench}"
work=$(mktemp -d /tmp/uibench.XXXXXX)
name="${name:-ui-superpod-$sus}"
pids=()
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
cleanup() {
  stop_pids
  if [ -z "$url" ] || [ -n "${started_daemon:-}" ]; then
    [ "$keep" = 1 ] || "$cli" sim down --name "$name" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$url" ]; then
  for b in "$cli" "$daemon"; do
    [ -x "$b" ] || { echo "missing $b: ./scripts/build.sh release" >&2; exit 2; }
  done
  "$cli" topo gen --preset superpod --sus "$sus" >"$work/fabric.net"
  t=$(date +%s.%N)
  if ! fabric_is_up "$cli" "$name"; then
    "$cli" sim up "$work/fabric.net" --name "$name" --timeout 900 >"$work/sim.log" 2>&1
  fi
  echo "sim up: $(echo "$(date +%s.%N) - $t" | bc) s" >&2
  (cd "$work" && exec "$cli" sim run --name "$name" -- "$daemon" --listen 127.0.0.1:0 \
     >"$work/daemon.out" 2>"$work/daemon.err") &
  pids+=($!)
  started_daemon=1
  wait_for "ibfabricd to listen" 120 grep -q "listening on" "$work/daemon.out"
  url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/daemon.out" | head -1)
  ready() { curl -sf -m 5 "$url/api/v1/health" >/dev/null; }
  wait_for "ibfabricd to be ready" 600 ready
fi

# chromedriver on a free port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
chromedriver --port="$port" >"$work/chromedriver.log" 2>&1 &
pids+=($!)
wd="http://127.0.0.1:$port"
wait_for "chromedriver" 30 curl -sf "$wd/status"
caps='{"capabilities":{"alwaysMatch":{"browserName":"chrome","goog:chromeOptions":{"binary":"/usr/bin/chromium","args":["--headless=new","--no-sandbox","--disable-gpu","--disable-dev-shm-usage","--no-first-run","--window-size=1600,1000"]}}}}'
post() { curl -sf -m 120 -H 'Content-Type: application/json' -d "$2" "$wd$1"; }
# The page's figures once its map is drawn (polled for up to 30 s).
probe='const m = performance.getEntriesByName("ibf-map-drawn")[0];
if (!m) return null;
const r = performance.getEntriesByType("resource");
const data = r.filter((e) => e.name.includes("/api/v1/"));
const sum = (l, f) => l.reduce((n, e) => n + e[f], 0);
const map = r.find((e) => e.name.endsWith("/api/v1/fabric/map"));
return {first_view_ms: Math.round(m.startTime), data_bytes: sum(data, "transferSize"),
  all_bytes: sum(r, "transferSize"), requests: r.length, data_requests: data.length,
  map_transfer: map ? map.transferSize : 0, map_decoded: map ? map.decodedBodySize : 0,
  map_ms: map ? Math.round(map.duration) : 0, elements: document.querySelectorAll("[data-kind]").length,
  errors: (window.ibfErrors || []).length};'
script=$(jq -n --arg s "$probe" '{script: $s, args: []}')
: >"$work/runs.jsonl"
for i in $(seq 1 "$runs"); do
  sid=$(post /session "$caps" | jq -r .value.sessionId)
  post "/session/$sid/url" "{\"url\": \"$url/ui/\"}" >/dev/null
  for _ in $(seq 1 300); do
    v=$(post "/session/$sid/execute/sync" "$script" | jq -c .value)
    [ "$v" != "null" ] && break
    sleep 0.1
  done
  echo "$v" >>"$work/runs.jsonl"
  curl -sf -X DELETE "$wd/session/$sid" >/dev/null || true
done

summary=$(curl -s "$url/api/v1/topology" | jq -r '"\(.switches) switches, \(.cas) HCAs, \(.hosts) hosts, \(.links) cables"')
echo "## $(date -u '+%Y-%m-%d %H:%M') UTC — web view first view in headless Chromium (superpod, $sus SUs)"
echo
echo "- Fabric: $summary; ibsim + OpenSM ftree; ibfabricd at its defaults."
echo "- Command: \`bench/ui_bench.sh ${args:-(defaults)}\` (a fresh Chromium profile per run;"
echo "  first view = navigation start to the map drawn; bytes = Performance API transferSize)."
echo
echo "| run | first view (ms) | data requests (bytes on the wire) | all requests (bytes) | map (wire / decoded bytes, ms) | elements drawn | page errors |"
echo "|---|---|---|---|---|---|---|"
n=0
while read -r v; do
  n=$((n + 1))
  echo "$v" | jq -r --arg n "$n" '"| \($n) | \(.first_view_ms) | \(.data_bytes) (\(.data_requests) requests) | \(.all_bytes) (\(.requests)) | \(.map_transfer) / \(.map_decoded), \(.map_ms) | \(.elements) | \(.errors) |"'
done <"$work/runs.jsonl"

[ "$unlink" = 1 ] || exit 0
# A cable goes down while a page is open: how long until the map shows it.
leaf=$(curl -s --compressed "$url/api/v1/fabric/map" | jq -r '.switches[] | select(.name | contains(";leaf-su1-r1:")) | .guid')
last=$(curl -s --compressed -D - -o /dev/null "$url/api/v1/fabric/map" | tr -d '\r' | sed -n 's/^X-Last-Event-Id: //Ip')
sid=$(post /session "$caps" | jq -r .value.sessionId)
post "/session/$sid/url" "{\"url\": \"$url/ui/\"}" >/dev/null
drawn='{"script": "return document.body.dataset.mapDrawn || null", "args": []}'
for _ in $(seq 1 300); do [ "$(post "/session/$sid/execute/sync" "$drawn" | jq -r .value)" = 1 ] && break; sleep 0.1; done
state=$(jq -n --arg g "$leaf" '{script: "const t = [...document.querySelectorAll(\"[data-kind=trunk]\")].find((e) => e.dataset.a === arguments[0] && e.dataset.aPorts.split(\" \").includes(\"33\")); return t ? t.dataset.state : null", args: [$g]}')
t0=$(date +%s.%N)
"$cli" sim cmd --name "$name" 'Unlink "leaf-su1-r1"[33]' >/dev/null
seen=""
deadline=$(( $(date +%s) + 90 ))
while [ "$(date +%s)" -lt "$deadline" ]; do
  [ "$(post "/session/$sid/execute/sync" "$state" | jq -r .value)" = down ] && { seen=$(date +%s.%N); break; }
  sleep 0.02
done
ev=$(curl -s "$url/api/v1/events?since=$last&type=link_down" | jq -r '[.events[] | select(.node | contains("leaf-su1-r1:")) | .time][0] // empty')
curl -sf -X DELETE "$wd/session/$sid" >/dev/null || true
"$cli" sim cmd --name "$name" 'ReLink "leaf-su1-r1"[33]' >/dev/null
echo
if [ -z "$seen" ]; then
  echo "- \`Unlink \"leaf-su1-r1\"[33]\`: the trunk was not drawn down within 90 s."
  exit 0
fi
secs() { printf '%.2f' "$(echo "$1 - $2" | bc)"; }
after_cmd=$(secs "$seen" "$t0")
line="- \`Unlink \"leaf-su1-r1\"[33]\` with a page open: the trunk drawn \`down\` $after_cmd s after the command"
if [ -n "$ev" ]; then
  line="$line, $(secs "$seen" "$ev") s after the time of the link_down event"
  line="$line (stamped $(secs "$ev" "$t0") s after the command)"
fi
echo "$line."
