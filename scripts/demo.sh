#!/usr/bin/env bash
# The README's demo command: installs dependencies, builds, starts a simulated 4-SU DGX
# SuperPOD-style fabric (ibsim + OpenSM with ftree routing) and shows ibfabric working on it.
#
#   ./scripts/demo.sh            interactive: keeps the fabric up until Ctrl-C
#   ./scripts/demo.sh --once     shows everything, then stops the fabric and exits
#   IBFABRIC_DEMO_SUS=8 ./scripts/demo.sh   a larger superpod
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

cleanup() {
  echo
  echo "demo: stopping the simulated fabric"
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

if [ "$once" = 1 ]; then
  exit 0
fi

banner "The fabric stays up. Try, in another shell:"
cat <<EOT
  export IBFABRIC_SIM_DIR=$IBFABRIC_SIM_DIR
  $cli sim list
  $cli sim run --name $name -- ibnetdiscover | head
  $cli sim run --name $name -- $cli discover --format dot > fabric.dot
  $cli sim cmd --name $name 'Unlink "leaf-su1-r2"[33]'
Press Ctrl-C here to stop everything.
EOT
while true; do sleep 3600; done
