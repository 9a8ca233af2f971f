#!/usr/bin/env bash
# Fails when a library includes a header from a layer above it.
# Order (lowest first): discovery, telemetry, routing, scheduler_hooks, api.
# tools/ and tests/ may include anything.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A forbidden=(
  [discovery]="telemetry routing scheduler_hooks api tools"
  [telemetry]="routing scheduler_hooks api tools"
  [routing]="scheduler_hooks api tools"
  [scheduler_hooks]="api tools"
  [api]="tools"
)
status=0
for layer in "${!forbidden[@]}"; do
  for up in ${forbidden[$layer]}; do
    if hits=$(grep -rnE "#include \"${up}/" "$layer" --include='*.h' --include='*.cpp' 2>/dev/null); then
      echo "check-layering: $layer must not include $up/:" >&2
      echo "$hits" | sed 's/^/  /' >&2
      status=1
    fi
  done
done
# Only discovery/*.cpp may see libibnetdisc.
if hits=$(grep -rln "infiniband/ibnetdisc.h" --include='*.h' . 2>/dev/null | grep -v '^./build'); then
  echo "check-layering: libibnetdisc types leak through headers:" >&2
  echo "$hits" | sed 's/^/  /' >&2
  status=1
fi
[ $status -eq 0 ] && echo "check-layering: ok"
exit $status
