#!/usr/bin/env bash
# Fails when code includes a header from a layer above it.
# Libraries (lowest first): discovery, telemetry, routing, scheduler_hooks, api.
# Rooms inside api/ (lowest first): osm, service, metrics, http, daemon — the data flows
# osm -> service -> metrics -> http -> daemon (docs/architecture.md).
# tools/ and tests/ may include any library; no library, room or tool may include tests/, and
# no file there is a test double (fake_*: those live in tests/fakes/).
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A forbidden=(
  [discovery]="telemetry routing scheduler_hooks api tools tests"
  [telemetry]="routing scheduler_hooks api tools tests"
  [routing]="scheduler_hooks api tools tests"
  [scheduler_hooks]="api tools tests"
  [api]="tools tests"
  [api/osm]="api/service api/metrics api/http api/daemon"
  [api/service]="api/metrics api/http api/daemon"
  [api/metrics]="api/http api/daemon"
  [api/http]="api/daemon"
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
# Every api source lives in a room.
if stray=$(find api -maxdepth 1 -name '*.h' -o -maxdepth 1 -name '*.cpp' | grep .); then
  echo "check-layering: api sources outside a room (osm, service, metrics, http, daemon):" >&2
  echo "$stray" | sed 's/^/  /' >&2
  status=1
fi
# Test doubles live in tests/fakes/: no production source is a fake or includes tests/.
production="discovery telemetry routing scheduler_hooks api tools"
# shellcheck disable=SC2086
if fakes=$(find $production -name 'fake_*' | grep .); then
  echo "check-layering: fakes in production code (they belong in tests/fakes/):" >&2
  echo "$fakes" | sed 's/^/  /' >&2
  status=1
fi
# shellcheck disable=SC2086
if hits=$(grep -rnE '#include "tests/' $production --include='*.h' --include='*.cpp' \
            --include='*.c' --include='*.in' 2>/dev/null); then
  echo "check-layering: production code includes tests/:" >&2
  echo "$hits" | sed 's/^/  /' >&2
  status=1
fi
# Only discovery/*.cpp may see libibnetdisc.
if hits=$(grep -rln "infiniband/ibnetdisc.h" --include='*.h' . 2>/dev/null | grep -v '^./build'); then
  echo "check-layering: libibnetdisc types leak through headers:" >&2
  echo "$hits" | sed 's/^/  /' >&2
  status=1
fi
[ $status -eq 0 ] && echo "check-layering: ok"
exit $status
